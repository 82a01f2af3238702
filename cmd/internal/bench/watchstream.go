package bench

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/coder/websocket"
	"google.golang.org/protobuf/encoding/protowire"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
)

// watchedLease is what the watch workload needs of an event: which write it carries and when
// that write started.
type watchedLease struct {
	revision  int64 // the resourceVersion
	renewTime time.Time
}

// watchURL is the URL of a watch of the namespace's leases from revision fromRV.
func (c *leaseClient) watchURL(fromRV string) string {
	q := url.Values{"watch": {"1"}, "resourceVersion": {fromRV}}
	return strings.TrimSuffix(c.base, "/") + "?" + q.Encode()
}

// watchHTTP follows the namespace over chunked HTTP as client-go's watch does (protobuf frames,
// each a length and a metav1.WatchEvent). The receipt time is taken when a frame has arrived,
// before it is decoded, so that the latency is the server's and the network's, not the time
// this process takes to decode a thousand streams.
func (c *leaseClient) watchHTTP(ctx context.Context, fromRV string, ready chan<- struct{}, on func(watchedLease, time.Time)) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.watchURL(fromRV), nil)
	if err != nil {
		ready <- struct{}{}
		return err
	}
	req.Header.Set("Accept", mediaProtobuf+";stream=watch")
	resp, err := c.hc.Do(req)
	ready <- struct{}{}
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("watch: %s", resp.Status)
	}
	r := bufio.NewReader(resp.Body)
	var frame []byte
	var size [4]byte
	for {
		if _, err := io.ReadFull(r, size[:]); err != nil {
			return err
		}
		frame = slices.Grow(frame[:0], int(binary.BigEndian.Uint32(size[:])))[:binary.BigEndian.Uint32(size[:])]
		if _, err := io.ReadFull(r, frame); err != nil {
			return err
		}
		at := time.Now()
		w, err := scanWatchFrame(frame)
		if err != nil {
			return err
		}
		on(w, at)
	}
}

// protobufMagic starts every object in Kubernetes' protobuf encoding, before the
// runtime.Unknown envelope.
var protobufMagic = []byte("k8s\x00")

// scanWatchFrame reads the revision and renewTime of the Lease in a protobuf watch event
// without decoding the rest (managedFields are most of a Lease): a WatchEvent{1 type, 2 object:
// RawExtension{1 raw}} whose raw is the "k8s\x00" magic and a runtime.Unknown{1 typeMeta{2 kind},
// 2 raw: Lease{1 metadata{6 resourceVersion}, 2 spec{4 renewTime{1 seconds, 2 nanos}}}}.
func scanWatchFrame(frame []byte) (watchedLease, error) {
	var (
		err  error
		path []byte // the message being read, for errors
	)
	field := func(msg []byte, num protowire.Number) []byte {
		if err != nil {
			return nil
		}
		var v []byte
		v, err = protoField(msg, num)
		path = msg
		return v
	}
	typ := field(frame, 1)
	raw := field(field(frame, 2), 1)
	if err == nil && string(typ) == string(watch.Error) {
		return watchedLease{}, fmt.Errorf("watch error event")
	}
	if err == nil && !bytes.HasPrefix(raw, protobufMagic) {
		return watchedLease{}, fmt.Errorf("watch event object is not protobuf")
	}
	obj := raw[min(len(raw), len(protobufMagic)):]
	kind := field(field(obj, 1), 2)
	lease := field(obj, 2)
	rv := field(field(lease, 1), 6)
	renew := field(field(lease, 2), 4)
	if err != nil {
		return watchedLease{}, fmt.Errorf("watch event: %w in % .40x", err, path)
	}
	if string(kind) != leaseGVK.Kind {
		return watchedLease{}, fmt.Errorf("watch event of a %q", kind)
	}
	rev, perr := strconv.ParseInt(string(rv), 10, 64)
	if perr != nil {
		return watchedLease{}, fmt.Errorf("resourceVersion %q: %w", rv, perr)
	}
	w := watchedLease{revision: rev}
	if renew != nil {
		if w.renewTime, err = scanTimestamp(renew); err != nil {
			return watchedLease{}, fmt.Errorf("renewTime: %w", err)
		}
	}
	return w, nil
}

// scanTimestamp reads a protobuf Timestamp{1 seconds, 2 nanos}, the encoding of a MicroTime.
func scanTimestamp(msg []byte) (time.Time, error) {
	var secs, nanos uint64
	for len(msg) > 0 {
		num, typ, n := protowire.ConsumeTag(msg)
		if n < 0 || typ != protowire.VarintType {
			return time.Time{}, fmt.Errorf("field %d of type %d", num, typ)
		}
		v, m := protowire.ConsumeVarint(msg[n:])
		if m < 0 {
			return time.Time{}, protowire.ParseError(m)
		}
		switch num {
		case 1:
			secs = v
		case 2:
			nanos = v
		}
		msg = msg[n+m:]
	}
	return time.Unix(int64(secs), int64(int32(nanos))), nil
}

// protoField returns the last value of the length-delimited field num of a protobuf message
// (nil when absent), skipping every other field.
func protoField(msg []byte, num protowire.Number) ([]byte, error) {
	var found []byte
	for len(msg) > 0 {
		n, typ, l := protowire.ConsumeTag(msg)
		if l < 0 {
			return nil, protowire.ParseError(l)
		}
		msg = msg[l:]
		if n == num && typ == protowire.BytesType {
			v, l := protowire.ConsumeBytes(msg)
			if l < 0 {
				return nil, protowire.ParseError(l)
			}
			found = v
			msg = msg[l:]
			continue
		}
		l = protowire.ConsumeFieldValue(n, typ, msg)
		if l < 0 {
			return nil, protowire.ParseError(l)
		}
		msg = msg[l:]
	}
	return found, nil
}

// watchWebSocket follows the namespace over a WebSocket upgrade of the same watch URL (JSON, one
// event per message, as browsers use it), timing each message on receipt.
func (c *leaseClient) watchWebSocket(ctx context.Context, fromRV string, ready chan<- struct{}, on func(watchedLease, time.Time)) error {
	u := c.watchURL(fromRV)
	u = "ws" + strings.TrimPrefix(u, "http")
	conn, _, err := websocket.Dial(ctx, u, &websocket.DialOptions{HTTPClient: c.hc})
	ready <- struct{}{}
	if err != nil {
		return err
	}
	defer conn.CloseNow()
	// Reads run without a context, which would cost a timer per message; closing the
	// connection ends them.
	stop := context.AfterFunc(ctx, func() { conn.CloseNow() })
	defer stop()
	conn.SetReadLimit(1 << 20)
	var msg bytes.Buffer
	for {
		_, r, err := conn.Reader(context.Background())
		if err != nil {
			return err
		}
		msg.Reset()
		if _, err := msg.ReadFrom(r); err != nil {
			return err
		}
		at := time.Now()
		ev, err := scanWatchEvent(msg.Bytes())
		if err != nil {
			return err
		}
		on(ev, at)
	}
}

// scanWatchEvent reads the resourceVersion and renewTime of a JSON watch event of one of the
// workload's leases by scanning for the two fields instead of decoding the whole event: each
// occurs once in such a lease (managedFields name renewTime only as "f:renewTime"), and a full
// decode of every event of a thousand streams would make this process, not the server, the
// bottleneck.
func scanWatchEvent(msg []byte) (watchedLease, error) {
	typ, ok := jsonString(msg, "type")
	if !ok || typ == string(watch.Error) {
		return watchedLease{}, fmt.Errorf("watch event: %.200s", msg)
	}
	var ev watchedLease
	rv, ok := jsonString(msg, "resourceVersion")
	if !ok {
		return watchedLease{}, fmt.Errorf("watch event without a resourceVersion: %.200s", msg)
	}
	rev, err := strconv.ParseInt(rv, 10, 64)
	if err != nil {
		return watchedLease{}, fmt.Errorf("resourceVersion %q: %w", rv, err)
	}
	ev.revision = rev
	if rt, ok := jsonString(msg, "renewTime"); ok {
		t, err := time.Parse(metav1.RFC3339Micro, rt)
		if err != nil {
			return watchedLease{}, fmt.Errorf("renewTime %q: %w", rt, err)
		}
		ev.renewTime = t
	}
	return ev, nil
}

// jsonString returns the value of the first "key":"value" pair in compact JSON, for values
// without escapes.
func jsonString(msg []byte, key string) (string, bool) {
	pat := `"` + key + `":"`
	i := bytes.Index(msg, []byte(pat))
	if i < 0 {
		return "", false
	}
	v := msg[i+len(pat):]
	end := bytes.IndexByte(v, '"')
	if end < 0 || bytes.IndexByte(v[:end], '\\') >= 0 {
		return "", false
	}
	return string(v[:end]), true
}
