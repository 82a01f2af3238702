// Package status writes every metav1.Status error the server answers with: the API handlers'
// (404, 409, 422, ...), authentication's and authorization's (401, 403), the limits' (429),
// discovery's (406, 500) and a handler's panic (500). One function (Write) encodes them, in the
// encoding the client negotiates where the part that failed offers a choice.
//
// The parts of the server have always framed their Status answers slightly differently, and
// clients rely on every byte: each part's framing is a Form, kept as it is.
package status

import (
	"bytes"
	"encoding/json"
	"errors"
	"net/http"
	"strconv"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer"

	"github.com/leaselab/leaselab/web/api/mediatype"
	"github.com/leaselab/leaselab/web/api/request"
)

// The media types a Status can be encoded as.
const (
	MediaJSON     = "application/json"
	MediaYAML     = "application/yaml"
	MediaProtobuf = "application/vnd.kubernetes.protobuf"
)

// Form is how one part of the server frames its Status answers.
type Form struct {
	// MediaTypes are the encodings offered, JSON first: the Accept header chooses among them
	// and a pretty request (request.Pretty, or pretty=1 on the chosen type) indents, as the
	// real server's API handlers do; an Accept that allows none of them gets indented JSON.
	// Empty: compact JSON whatever the client asks for.
	MediaTypes []string
	// NoNewline leaves out the newline the API's JSON encoder ends a document with.
	NoNewline bool
	// NoCache sends Cache-Control: no-cache, private, as the real server does everywhere.
	NoCache bool
	// NoSniff sends X-Content-Type-Options: nosniff, as the real server's authorization does.
	NoSniff bool
}

// The forms of the parts of the server that answer with a Status.
var (
	// Filter is the form of authentication, authorization and the limits (401, 403, 429).
	// Their bodies end with the newline of the real server's JSON encoder, as every recorded
	// 401 and 403 does (content-length 129 for the 128 bytes of the 401's JSON).
	Filter = Form{NoCache: true, NoSniff: true}
	// Discovery is the form of the discovery and OpenAPI documents' errors (406, 500).
	Discovery = Form{}
	// Recovered is the form of the 500 that answers a handler's panic.
	Recovered = Form{NoNewline: true}
	// Router is the form of the errors no handler answered itself: a path or a method nothing
	// serves, and a failed screen's answer to a client that is not a browser.
	Router = Form{NoCache: true}
)

// API is the form of the resource handlers for a kind served as mediaTypes.
func API(mediaTypes []string) Form { return Form{MediaTypes: mediaTypes, NoCache: true} }

// codecs encode a Status in every media type.
var codecs = func() serializer.CodecFactory {
	scheme := runtime.NewScheme()
	metav1.AddToGroupVersion(scheme, metav1.SchemeGroupVersion)
	return serializer.NewCodecFactory(scheme)
}()

// Write answers err, as the Status From makes of it, in form f, and returns the status code
// written. A Status that asks the client to retry later also sets Retry-After. A HEAD request
// gets the headers only.
func Write(w http.ResponseWriter, r *http.Request, err error, f Form) int {
	st := From(err)
	code := int(st.Code)
	if code == 0 {
		code = http.StatusInternalServerError
	}
	h := w.Header()
	if st.Details != nil && st.Details.RetryAfterSeconds > 0 {
		h.Set("Retry-After", strconv.Itoa(int(st.Details.RetryAfterSeconds)))
	}
	media, body := encode(r, st, f)
	h.Set("Content-Type", media)
	if f.NoCache {
		h.Set("Cache-Control", "no-cache, private")
	}
	if f.NoSniff {
		h.Set("X-Content-Type-Options", "nosniff")
	}
	h.Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(code)
	if r.Method != http.MethodHead {
		w.Write(body)
	}
	return code
}

// encode encodes st in form f for request r and returns the media type and the bytes.
func encode(r *http.Request, st *metav1.Status, f Form) (string, []byte) {
	if len(f.MediaTypes) == 0 {
		b, _ := json.Marshal(st) // a Status always encodes
		if !f.NoNewline {
			b = append(b, '\n')
		}
		return MediaJSON, b
	}
	media, pretty, ok := negotiate(r, f.MediaTypes)
	if !ok {
		// Nothing the client accepts can carry a Status (a 406, or an Accept that only takes a
		// Table): the real server then writes it as indented JSON all the same.
		b, _ := json.MarshalIndent(st, "", "  ")
		return MediaJSON, b
	}
	info, _ := runtime.SerializerInfoForMediaType(codecs.SupportedMediaTypes(), media)
	ser := info.Serializer
	if pretty && info.PrettySerializer != nil {
		ser = info.PrettySerializer
	}
	var buf bytes.Buffer
	if err := codecs.EncoderForVersion(ser, schema.GroupVersion{Version: "v1"}).Encode(st, &buf); err != nil {
		b, _ := json.Marshal(st)
		return MediaJSON, append(b, '\n')
	}
	b := buf.Bytes()
	if pretty && media == MediaJSON {
		b = bytes.TrimRight(b, "\n")
	}
	return media, b
}

// negotiate picks the media type of a Status from r's Accept header among offered, JSON
// first: the first clause that asks for no conversion (a Status is never a Table) and that
// one of offered matches.
func negotiate(r *http.Request, offered []string) (media string, pretty, ok bool) {
	for _, m := range mediatype.ParseAccept(r.Header.Get("Accept")) {
		if m.Params["as"] != "" {
			continue
		}
		for _, o := range offered {
			typ, subtype, _ := strings.Cut(o, "/")
			if m.Matches(typ, subtype) {
				return o, request.Pretty(r) || m.Params["pretty"] == "1", true
			}
		}
	}
	return "", false, false
}

// From turns any error into the Status the client receives, kind and apiVersion set: the
// Status of an apierrors.APIStatus, else an internal error (500) with the error's text.
func From(err error) *metav1.Status {
	var st metav1.Status
	var as apierrors.APIStatus
	if errors.As(err, &as) {
		st = as.Status()
		if st.Status == "" {
			st.Status = metav1.StatusFailure
		}
	} else {
		st = apierrors.NewInternalError(err).ErrStatus
	}
	st.Kind, st.APIVersion = "Status", "v1"
	return &st
}

// New builds a failure Status error for the cases apimachinery has no constructor for.
func New(code int32, reason metav1.StatusReason, message string, details *metav1.StatusDetails) *apierrors.StatusError {
	return &apierrors.StatusError{ErrStatus: metav1.Status{
		Status:  metav1.StatusFailure,
		Code:    code,
		Reason:  reason,
		Message: message,
		Details: details,
	}}
}

// NotAcceptable is the 406 of a handler that can produce none of the media types a request
// accepts: "only the following media types are accepted: " and what it offers.
func NotAcceptable(offered ...string) *apierrors.StatusError {
	return New(http.StatusNotAcceptable, metav1.StatusReasonNotAcceptable,
		"only the following media types are accepted: "+strings.Join(offered, ", "), nil)
}

// Internal is a 500 with the reason InternalError and message as it is, without the causes
// apierrors.NewInternalError adds: what the real server answers for a panic or a document it
// could not build.
func Internal(message string) *apierrors.StatusError {
	return New(http.StatusInternalServerError, metav1.StatusReasonInternalError, message, nil)
}

// MethodNotAllowed is a 405 with the reason MethodNotAllowed, kube-apiserver's answer to a verb
// a resource does not support (apierrors.NewMethodNotSupported), with a message of its own: a
// replay refuses every write with it. gr and name fill the details of a resource request.
func MethodNotAllowed(gr schema.GroupResource, name, message string) *apierrors.StatusError {
	var d *metav1.StatusDetails
	if gr.Resource != "" {
		d = &metav1.StatusDetails{Group: gr.Group, Kind: gr.Resource, Name: name}
	}
	return New(http.StatusMethodNotAllowed, metav1.StatusReasonMethodNotAllowed, message, d)
}

// PathNotFound is kube-apiserver's 404 for a path nothing serves
// (samples/lease-get-unknown-resource-404.http).
func PathNotFound() *apierrors.StatusError {
	return New(http.StatusNotFound, metav1.StatusReasonNotFound, "the server could not find the requested resource", &metav1.StatusDetails{})
}

// NoRouteForMethod is kube-apiserver's 405 for a method its router has no route for on a path
// it knows, whatever the method (samples/lease-method-not-allowed-405.http).
func NoRouteForMethod() *apierrors.StatusError {
	return New(http.StatusMethodNotAllowed, metav1.StatusReasonMethodNotAllowed, "the server does not allow this method on the requested resource", &metav1.StatusDetails{})
}

// ForCode is a failure Status of an HTTP status code whose cause is only a message (an error of
// the web framework or of a screen), with the reason kube-apiserver gives that code.
func ForCode(code int, message string) *apierrors.StatusError {
	return New(int32(code), reasonForCode[code], message, nil)
}

// reasonForCode is the reason of each status code the server answers with; a code not here
// has none (StatusReasonUnknown).
var reasonForCode = map[int]metav1.StatusReason{
	http.StatusBadRequest:            metav1.StatusReasonBadRequest,
	http.StatusUnauthorized:          metav1.StatusReasonUnauthorized,
	http.StatusForbidden:             metav1.StatusReasonForbidden,
	http.StatusNotFound:              metav1.StatusReasonNotFound,
	http.StatusMethodNotAllowed:      metav1.StatusReasonMethodNotAllowed,
	http.StatusNotAcceptable:         metav1.StatusReasonNotAcceptable,
	http.StatusConflict:              metav1.StatusReasonConflict,
	http.StatusGone:                  metav1.StatusReasonGone,
	http.StatusRequestEntityTooLarge: metav1.StatusReasonRequestEntityTooLarge,
	http.StatusUnsupportedMediaType:  metav1.StatusReasonUnsupportedMediaType,
	http.StatusUnprocessableEntity:   metav1.StatusReasonInvalid,
	http.StatusTooManyRequests:       metav1.StatusReasonTooManyRequests,
	http.StatusInternalServerError:   metav1.StatusReasonInternalError,
	http.StatusServiceUnavailable:    metav1.StatusReasonServiceUnavailable,
	http.StatusGatewayTimeout:        metav1.StatusReasonTimeout,
}
