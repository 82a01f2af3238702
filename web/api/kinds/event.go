package kinds

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	utilvalidation "k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// Length limits of the events written by the new-style (eventTime) event recorders.
const (
	reportingInstanceLengthLimit = 128
	actionLengthLimit            = 128
	reasonLengthLimit            = 128
	noteLengthLimit              = 1024
)

func eventKind() *Kind {
	doc := corev1.Event{}.SwaggerDoc()
	return &Kind{
		Group:                    corev1.GroupName,
		Resource:                 "events",
		Singular:                 "event",
		Kind:                     "Event",
		ListKind:                 "EventList",
		Namespaced:               true,
		Versions:                 []string{"v1"},
		StorageVersion:           "v1",
		Verbs:                    slices.Clone(verbs),
		AllowCreateOnUpdate:      true,
		AllowUnconditionalUpdate: true,
		PrepareForCreate:         func(runtime.Object) {},
		PrepareForUpdate:         func(_, _ runtime.Object) {},
		// Through core/v1 the real server applies only the legacy event rules, on create and on
		// update alike; the generic metadata rules come from the wrappers.
		Validate: createValidation(true, validateEvent),
		ValidateUpdate: updateValidation(true, func(ev, _ *corev1.Event, _ field.ErrorList) field.ErrorList {
			return validateEvent(ev)
		}),
		// The server prints events wide: every column, in this order.
		TableColumns: []metav1.TableColumnDefinition{
			{Name: "Last Seen", Type: "string", Description: doc["lastTimestamp"]},
			{Name: "Type", Type: "string", Description: doc["type"]},
			{Name: "Reason", Type: "string", Description: doc["reason"]},
			{Name: "Object", Type: "string", Description: doc["involvedObject"]},
			{Name: "Subobject", Type: "string", Priority: 1, Description: corev1.ObjectReference{}.SwaggerDoc()["fieldPath"]},
			{Name: "Source", Type: "string", Priority: 1, Description: doc["source"]},
			{Name: "Message", Type: "string", Description: doc["message"]},
			{Name: "First Seen", Type: "string", Priority: 1, Description: doc["firstTimestamp"]},
			{Name: "Count", Type: "string", Priority: 1, Description: doc["count"]},
			{Name: "Name", Type: "string", Priority: 1, Format: "name", Description: metav1.ObjectMeta{}.SwaggerDoc()["name"]},
		},
		TableCells: eventCells,
		FieldSet:   eventFields,
		fieldLabel: eventFieldLabel,
	}
}

// validateEvent is the core/v1 event validation. Old-style events (no eventTime) must name
// their own namespace in involvedObject.namespace, or leave it empty in "default"; new-style
// ones must say who reported them.
func validateEvent(ev *corev1.Event) field.ErrorList {
	var errs field.ErrorList
	involvedNamespace := field.NewPath("involvedObject", "namespace")
	if ev.EventTime.IsZero() {
		if ev.InvolvedObject.Namespace == "" {
			if ev.Namespace != metav1.NamespaceNone && ev.Namespace != metav1.NamespaceDefault {
				errs = append(errs, field.Invalid(involvedNamespace, ev.InvolvedObject.Namespace, "does not match event.namespace"))
			}
		} else if ev.Namespace != ev.InvolvedObject.Namespace {
			errs = append(errs, field.Invalid(involvedNamespace, ev.InvolvedObject.Namespace, "does not match event.namespace"))
		}
	} else {
		if ev.InvolvedObject.Namespace == "" && ev.Namespace != metav1.NamespaceDefault && ev.Namespace != metav1.NamespaceSystem {
			errs = append(errs, field.Invalid(involvedNamespace, ev.InvolvedObject.Namespace, "does not match event.namespace"))
		}
		reportingController := field.NewPath("reportingController")
		if ev.ReportingController == "" {
			errs = append(errs, field.Required(reportingController, ""))
		}
		for _, msg := range utilvalidation.IsQualifiedName(ev.ReportingController) {
			errs = append(errs, field.Invalid(reportingController, ev.ReportingController, msg))
		}
		// The length errors print an empty value, as the real server's do.
		errs = append(errs, requiredWithLimit(field.NewPath("reportingInstance"), ev.ReportingInstance, reportingInstanceLengthLimit)...)
		errs = append(errs, requiredWithLimit(field.NewPath("action"), ev.Action, actionLengthLimit)...)
		errs = append(errs, requiredWithLimit(field.NewPath("reason"), ev.Reason, reasonLengthLimit)...)
		if len(ev.Message) > noteLengthLimit {
			errs = append(errs, field.Invalid(field.NewPath("message"), "", fmt.Sprintf("can have at most %v characters", noteLengthLimit)))
		}
	}
	for _, msg := range utilvalidation.IsDNS1123Subdomain(ev.Namespace) {
		errs = append(errs, field.Invalid(field.NewPath("namespace"), ev.Namespace, msg))
	}
	return errs
}

func requiredWithLimit(path *field.Path, value string, limit int) field.ErrorList {
	var errs field.ErrorList
	if value == "" {
		errs = append(errs, field.Required(path, ""))
	}
	if len(value) > limit {
		errs = append(errs, field.Invalid(path, "", fmt.Sprintf("can have at most %v characters", limit)))
	}
	return errs
}

// eventCells prints one event as the real server does. Last Seen falls back to First Seen, which
// falls back to eventTime; a series overrides both Last Seen and Count; a singleton new-style
// event without a count counts 1.
func eventCells(obj runtime.Object, now time.Time) []any {
	ev, ok := obj.(*corev1.Event)
	if !ok {
		return nil
	}
	firstSeen := age(ev.FirstTimestamp, now)
	if ev.FirstTimestamp.IsZero() {
		firstSeen = microAge(ev.EventTime, now)
	}
	lastSeen := age(ev.LastTimestamp, now)
	if ev.LastTimestamp.IsZero() {
		lastSeen = firstSeen
	}
	count := ev.Count
	if ev.Series != nil {
		lastSeen = microAge(ev.Series.LastObservedTime, now)
		count = ev.Series.Count
	} else if count == 0 {
		count = 1
	}
	object := strings.ToLower(ev.InvolvedObject.Kind)
	if ev.InvolvedObject.Name != "" {
		object += "/" + ev.InvolvedObject.Name
	}
	return []any{
		lastSeen,
		ev.Type,
		ev.Reason,
		object,
		ev.InvolvedObject.FieldPath,
		eventSource(ev),
		strings.TrimSpace(ev.Message),
		firstSeen,
		int64(count),
		ev.Name,
	}
}

// eventSource prints "component[, host]", taking each from the reporting fields when the
// legacy source leaves it empty.
func eventSource(ev *corev1.Event) string {
	component := cmp.Or(ev.Source.Component, ev.ReportingController)
	host := cmp.Or(ev.Source.Host, ev.ReportingInstance)
	if host == "" {
		return component
	}
	return component + ", " + host
}

func eventFields(obj runtime.Object) fields.Set {
	ev, ok := obj.(*corev1.Event)
	if !ok {
		return nil
	}
	source := cmp.Or(ev.Source.Component, ev.ReportingController)
	return fields.Set{
		"metadata.name":                  ev.Name,
		"metadata.namespace":             ev.Namespace,
		"involvedObject.kind":            ev.InvolvedObject.Kind,
		"involvedObject.namespace":       ev.InvolvedObject.Namespace,
		"involvedObject.name":            ev.InvolvedObject.Name,
		"involvedObject.uid":             string(ev.InvolvedObject.UID),
		"involvedObject.apiVersion":      ev.InvolvedObject.APIVersion,
		"involvedObject.resourceVersion": ev.InvolvedObject.ResourceVersion,
		"involvedObject.fieldPath":       ev.InvolvedObject.FieldPath,
		"reason":                         ev.Reason,
		"reportingComponent":             ev.ReportingController,
		"source":                         source,
		"type":                           ev.Type,
	}
}
