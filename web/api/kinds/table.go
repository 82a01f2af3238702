package kinds

import (
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/duration"
)

// nameColumn is the Name column every kind's table starts with.
func nameColumn() metav1.TableColumnDefinition {
	return metav1.TableColumnDefinition{
		Name: "Name", Type: "string", Format: "name",
		Description: metav1.ObjectMeta{}.SwaggerDoc()["name"],
	}
}

// ageColumn is the Age column, measured from metadata.creationTimestamp.
func ageColumn() metav1.TableColumnDefinition {
	return metav1.TableColumnDefinition{
		Name: "Age", Type: "string",
		Description: metav1.ObjectMeta{}.SwaggerDoc()["creationTimestamp"],
	}
}

// age prints how long before now t was, as the real printers do: "<unknown>" for a zero time.
func age(t metav1.Time, now time.Time) string {
	if t.IsZero() {
		return "<unknown>"
	}
	return duration.HumanDuration(now.Sub(t.Time))
}

// microAge is age for a MicroTime.
func microAge(t metav1.MicroTime, now time.Time) string {
	if t.IsZero() {
		return "<unknown>"
	}
	return duration.HumanDuration(now.Sub(t.Time))
}
