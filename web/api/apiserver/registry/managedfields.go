package registry

import (
	"bytes"
	"encoding/json"
	"reflect"
	"slices"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/managedfields"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"

	"github.com/leaselab/leaselab/web/api/apiserver/ring"
)

// maxUpdateManagers is the field manager's cap on Update entries (DefaultMaxUpdateManagers):
// beyond it old entries are merged, which only the full field manager does.
const maxUpdateManagers = 10

// updateManagedFields runs the field manager of an Update (or a non-apply patch) by manager,
// from the stored old object to obj, both of the request's version. changed reports that the
// fast path saw a field's value differ from old: the update is then no no-op, and the caller
// need not compare the objects again.
//
// Most writes of lease traffic are renewals: the same manager changes scalar fields it already
// owns (spec.renewTime). For those the field manager's answer is known without converting both
// objects to typed values by reflection, which is most of the CPU of a renewal: every set stays
// as it is and only the manager's time moves to now. sameOwnerUpdate recognises exactly those
// updates and builds that answer; everything else goes through the field manager.
func updateManagedFields(fm *managedfields.FieldManager, old, obj runtime.Object, apiVersion string, known func(apiVersion string) bool, typed scalarsDiff, manager string) (out runtime.Object, changed bool) {
	if out, changed, ok := sameOwnerUpdate(old, obj, apiVersion, known, typed, manager, time.Now); ok {
		return out, changed
	}
	return fm.UpdateNoErrors(old, obj, manager), false
}

// sameOwnerUpdate is the field manager's Update for the case where the result is the old
// managedFields with, when something changed, the manager's entry timestamped now; changed
// says whether a field's value differs. It reports ok false, having changed nothing, when the
// update is not such a case. The conditions mirror
// what FieldManager.Update does (k8s.io/apimachinery/pkg/util/managedfields/internal):
//   - obj carries no managedFields or the stored ones, so that the stored ones are decoded;
//   - they decode: known operations, an apiVersion of the kind (entries of other versions are
//     dropped by the field manager), FieldsV1 that parse and serialize back to
//     the same bytes, no two entries for one manager, no empty set (it would be dropped), at
//     most maxUpdateManagers Update entries (no capping), sorted as the encoder sorts;
//   - the objects differ only in scalar values reached through object keys (no key added or
//     removed, no list changed), outside the metadata the field manager strips; and
//   - every changed field is owned by the manager's Update entry and by no other entry.
//
// The stored managedFields are always an output of the field manager (every write path runs
// it), so their sets already agree with the schema and its reconciliation leaves them alone.
// Then the structured-merge update removes the changed fields from every other manager (none
// has them) and gives them to the manager (who has them), so every set is unchanged.
func sameOwnerUpdate(old, obj runtime.Object, apiVersion string, known func(string) bool, typed scalarsDiff, manager string, now func() time.Time) (out runtime.Object, changed, ok bool) {
	if manager == "" {
		manager = "unknown"
	}
	oldAcc, err := meta.Accessor(old)
	if err != nil {
		return nil, false, false
	}
	acc, err := meta.Accessor(obj)
	if err != nil {
		return nil, false, false
	}
	entries := oldAcc.GetManagedFields()
	if len(entries) == 0 {
		return nil, false, false
	}
	if sent := acc.GetManagedFields(); sent != nil && !reflect.DeepEqual(sent, entries) {
		return nil, false, false
	}
	sets, mine, ok := entrySets(entries, known, manager, apiVersion)
	if !ok {
		return nil, false, false
	}
	paths, ok := changedPaths(old, obj, typed)
	if !ok {
		return nil, false, false
	}
	if len(paths) == 0 {
		// Nothing changed: the field manager leaves every entry, its time included, alone.
		acc.SetManagedFields(entries)
		return obj, false, true
	}
	if mine < 0 || !ownedOnlyBy(paths, sets, mine) {
		return nil, false, false
	}
	mf := make([]metav1.ManagedFieldsEntry, len(entries))
	copy(mf, entries)
	mf[mine].Time = &metav1.Time{Time: now().UTC()}
	slices.SortStableFunc(mf, compareManagedFields)
	acc.SetManagedFields(mf)
	return obj, true, true
}

// entrySets parses the field sets of the stored entries and finds the manager's Update entry
// (-1 when it has none). It reports false unless the entries are what the fast path takes:
// Update and Apply entries only, each manager once, of known versions, in FieldsV1, at most
// maxUpdateManagers Update entries, sorted as the encoder sorts.
func entrySets(entries []metav1.ManagedFieldsEntry, known func(string) bool, manager, apiVersion string) (sets []*fieldpath.Set, mine int, ok bool) {
	mine = -1
	sets = make([]*fieldpath.Set, len(entries))
	updaters := 0
	seen := make(map[[4]string]bool, len(entries))
	for i := range entries {
		e := &entries[i]
		id := [4]string{e.Manager, string(e.Operation), e.APIVersion, e.Subresource}
		switch e.Operation {
		case metav1.ManagedFieldsOperationUpdate:
			updaters++
		case metav1.ManagedFieldsOperationApply:
			id[2] = "" // appliers are one manager across versions
		default:
			return nil, -1, false
		}
		if !known(e.APIVersion) || e.FieldsType != "FieldsV1" || e.FieldsV1 == nil || seen[id] {
			return nil, -1, false
		}
		seen[id] = true
		s, ok := parseFieldSet(e.FieldsV1.Raw)
		if !ok {
			return nil, -1, false
		}
		sets[i] = s
		if e.Operation == metav1.ManagedFieldsOperationUpdate && e.Manager == manager &&
			e.APIVersion == apiVersion && e.Subresource == "" {
			mine = i
		}
	}
	if updaters > maxUpdateManagers || !slices.IsSortedFunc(entries, compareManagedFields) {
		return nil, -1, false
	}
	return sets, mine, true
}

// changedPaths are the scalar fields the update changes: by the kind's typed comparison unless
// there is none or it declines, else by comparing the JSON forms. It reports false when the
// update changes more than scalars reached through object keys.
func changedPaths(old, obj runtime.Object, typed scalarsDiff) ([]fieldpath.Path, bool) {
	if typed != nil {
		if paths, ok := typed(old, obj); ok {
			return paths, true
		}
	}
	return changedScalars(old, obj)
}

// ownedOnlyBy reports whether every path is in the set of entry mine and in no other.
func ownedOnlyBy(paths []fieldpath.Path, sets []*fieldpath.Set, mine int) bool {
	for _, p := range paths {
		for i, s := range sets {
			if s.Has(p) != (i == mine) {
				return false
			}
		}
	}
	return true
}

// fieldSets caches parsed FieldsV1: the entries of an object rarely change between its
// revisions (a renewal moves only a time), and parsing and serializing them back is a good part
// of the fast path's work. Sets are shared read-only.
var fieldSets = ring.New[string, *fieldpath.Set](1024)

// parseFieldSet parses a FieldsV1 and reports false unless it is a non-empty set that
// serializes back to the same bytes.
func parseFieldSet(raw []byte) (*fieldpath.Set, bool) {
	if s, ok := fieldSets.Get(string(raw)); ok {
		return s, true
	}
	s := &fieldpath.Set{}
	if err := s.FromJSON(bytes.NewReader(raw)); err != nil || s.Empty() {
		return nil, false
	}
	if back, err := s.ToJSON(); err != nil || !bytes.Equal(back, raw) {
		return nil, false
	}
	return fieldSets.Add(string(raw), s), true
}

// compareManagedFields is the order the field manager writes entries in: by operation, time
// in seconds, manager, apiVersion and subresource.
func compareManagedFields(p, q metav1.ManagedFieldsEntry) int {
	if p.Operation != q.Operation {
		return strings.Compare(string(p.Operation), string(q.Operation))
	}
	var ps, qs int64
	if p.Time != nil {
		ps = p.Time.Unix()
	}
	if q.Time != nil {
		qs = q.Time.Unix()
	}
	switch {
	case ps < qs:
		return -1
	case ps > qs:
		return 1
	}
	if c := strings.Compare(p.Manager, q.Manager); c != 0 {
		return c
	}
	if c := strings.Compare(p.APIVersion, q.APIVersion); c != 0 {
		return c
	}
	return strings.Compare(p.Subresource, q.Subresource)
}

// scalarsDiff is a kind's own changedScalars on its typed objects (kinds.Kind.ChangedScalars),
// which may decline (ok false); nil for none.
type scalarsDiff func(old, obj runtime.Object) ([]fieldpath.Path, bool)

// changedScalars returns the paths of the scalar fields whose values differ between old and
// obj, compared in their JSON form (the form the field manager's typed values are built from),
// managedFields aside. It reports false when they differ in any other way: a key on one side
// only, a list, a type, or a field of the metadata the field manager never assigns.
func changedScalars(old, obj runtime.Object) ([]fieldpath.Path, bool) {
	ja, ok := jsonWithoutManagedFields(old)
	if !ok {
		return nil, false
	}
	jb, ok := jsonWithoutManagedFields(obj)
	if !ok {
		return nil, false
	}
	if bytes.Equal(ja, jb) {
		return nil, true
	}
	d := jsonDiff{a: ja, b: jb}
	if !d.value(nil) || d.i != len(ja) || d.j != len(jb) {
		return nil, false
	}
	changed := d.changed
	for _, p := range changed {
		// Of the metadata, only labels and annotations are fields a manager can own; the rest
		// is stripped from every set or server-managed.
		if name := *p[0].FieldName; name == "apiVersion" || name == "kind" ||
			name == "metadata" && (len(p) < 3 || *p[1].FieldName != "labels" && *p[1].FieldName != "annotations") {
			return nil, false
		}
	}
	return changed, true
}

// jsonWithoutManagedFields is the JSON of obj with its managedFields left out.
func jsonWithoutManagedFields(obj runtime.Object) ([]byte, bool) {
	acc, err := meta.Accessor(obj)
	if err != nil {
		return nil, false
	}
	mf := acc.GetManagedFields()
	acc.SetManagedFields(nil)
	b, err := json.Marshal(obj)
	acc.SetManagedFields(mf)
	return b, err == nil
}

// jsonDiff walks two compact JSON documents (as json.Marshal writes them) side by side and
// collects the paths of the scalar values that differ. It fails (false) at any other
// difference: a key, the shape of an object, a list, the type of a value.
type jsonDiff struct {
	a, b    []byte
	i, j    int
	changed []fieldpath.Path
}

// value compares the values at the current positions, whose path is path.
func (d *jsonDiff) value(path []string) bool {
	if d.i >= len(d.a) || d.j >= len(d.b) {
		return false
	}
	ca, cb := d.a[d.i], d.b[d.j]
	switch {
	case ca == '{' && cb == '{':
		return d.object(path)
	case ca == '[' || cb == '[':
		ea, ok1 := skipValue(d.a, d.i)
		eb, ok2 := skipValue(d.b, d.j)
		if !ok1 || !ok2 || !bytes.Equal(d.a[d.i:ea], d.b[d.j:eb]) {
			return false
		}
		d.i, d.j = ea, eb
		return true
	case ca == '{' || cb == '{':
		return false
	}
	return d.scalar(path)
}

// object compares two objects, both at their opening brace.
func (d *jsonDiff) object(path []string) bool {
	d.i++
	d.j++
	if d.i < len(d.a) && d.a[d.i] == '}' || d.j < len(d.b) && d.b[d.j] == '}' {
		if d.i >= len(d.a) || d.j >= len(d.b) || d.a[d.i] != '}' || d.b[d.j] != '}' {
			return false
		}
		d.i++
		d.j++
		return true
	}
	for {
		ka, ok1 := scanToken(d.a, d.i)
		kb, ok2 := scanToken(d.b, d.j)
		if !ok1 || !ok2 || d.a[d.i] != '"' || !bytes.Equal(d.a[d.i:ka], d.b[d.j:kb]) {
			return false
		}
		key := string(d.a[d.i+1 : ka-1])
		if bytes.IndexByte(d.a[d.i:ka], '\\') >= 0 {
			if err := json.Unmarshal(d.a[d.i:ka], &key); err != nil {
				return false
			}
		}
		d.i, d.j = ka, kb
		if d.i >= len(d.a) || d.j >= len(d.b) || d.a[d.i] != ':' || d.b[d.j] != ':' {
			return false
		}
		d.i++
		d.j++
		if !d.value(append(path[:len(path):len(path)], key)) {
			return false
		}
		if d.i >= len(d.a) || d.j >= len(d.b) || d.a[d.i] != d.b[d.j] {
			return false
		}
		switch d.a[d.i] {
		case ',':
			d.i++
			d.j++
		case '}':
			d.i++
			d.j++
			return true
		default:
			return false
		}
	}
}

// scalar compares two scalars, and records the path of one that changed value.
func (d *jsonDiff) scalar(path []string) bool {
	ea, ok1 := scanToken(d.a, d.i)
	eb, ok2 := scanToken(d.b, d.j)
	if !ok1 || !ok2 {
		return false
	}
	ta, tb := d.a[d.i:ea], d.b[d.j:eb]
	d.i, d.j = ea, eb
	if bytes.Equal(ta, tb) {
		return true
	}
	if scalarKind(ta[0]) != scalarKind(tb[0]) || scalarKind(ta[0]) == 0 || len(path) == 0 {
		return false // a change of type, or null on one side
	}
	p := make(fieldpath.Path, len(path))
	for k := range path {
		p[k] = fieldpath.PathElement{FieldName: &path[k]}
	}
	d.changed = append(d.changed, p)
	return true
}

// scalarKind classifies a scalar by its first byte: 's'tring, 'n'umber, 'b'oolean, or 0 for
// null.
func scalarKind(c byte) byte {
	switch {
	case c == '"':
		return 's'
	case c == 't' || c == 'f':
		return 'b'
	case c == '-' || c >= '0' && c <= '9':
		return 'n'
	}
	return 0
}

// scanToken returns the end of the scalar (string, number, literal) starting at i.
func scanToken(b []byte, i int) (int, bool) {
	if i >= len(b) {
		return 0, false
	}
	if b[i] == '"' {
		for k := i + 1; k < len(b); k++ {
			switch b[k] {
			case '\\':
				k++
			case '"':
				return k + 1, true
			}
		}
		return 0, false
	}
	k := i
	for k < len(b) && b[k] != ',' && b[k] != '}' && b[k] != ']' && b[k] != ':' {
		k++
	}
	return k, k > i
}

// skipValue returns the end of the value (of any kind) starting at i.
func skipValue(b []byte, i int) (int, bool) {
	if i >= len(b) {
		return 0, false
	}
	if b[i] != '[' && b[i] != '{' {
		return scanToken(b, i)
	}
	depth := 0
	for k := i; k < len(b); k++ {
		switch b[k] {
		case '"':
			end, ok := scanToken(b, k)
			if !ok {
				return 0, false
			}
			k = end - 1
		case '[', '{':
			depth++
		case ']', '}':
			depth--
			if depth == 0 {
				return k + 1, true
			}
		}
	}
	return 0, false
}
