package apiserver

import (
	"net/http"
	"slices"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/leaselab/leaselab/web/api/mediatype"
	apirequest "github.com/leaselab/leaselab/web/api/request"
	"github.com/leaselab/leaselab/web/api/status"
)

const (
	mediaJSON     = "application/json"
	mediaYAML     = "application/yaml"
	mediaProtobuf = "application/vnd.kubernetes.protobuf"
)

// Conversions a client may ask for with the "as" parameter of its Accept header.
const (
	asObject                    = ""
	asTable                     = "Table"
	asPartialObjectMetadata     = "PartialObjectMetadata"
	asPartialObjectMetadataList = "PartialObjectMetadataList"
)

// output is the negotiated form of a response.
type output struct {
	info runtime.SerializerInfo
	// as is one of the as* constants; asVersion the meta.k8s.io version asked for with it.
	as        string
	asVersion string
	pretty    bool
}

// metaGV is the meta.k8s.io version a conversion is encoded at: the one asked for (v1 or
// v1beta1).
func (o output) metaGV() schema.GroupVersion {
	if o.asVersion == "v1beta1" {
		return schema.GroupVersion{Group: metav1.GroupName, Version: "v1beta1"}
	}
	return metaGV
}

// mediaTypes returns the media types the request's kind and version are served as: all of
// supportedMediaTypes, or JSON and YAML for a version without protobuf.
func (q *request) mediaTypes() []string {
	if q.kind != nil && !q.kind.ServesProtobuf(q.ri.Version) {
		return jsonYAMLMediaTypes
	}
	return supportedMediaTypes
}

// negotiateOutput picks how to encode a response from the Accept header, as the real API server
// does: JSON for a missing Accept or */*, conversions to Table or PartialObjectMetadata when
// asked for and allowed, 406 when nothing acceptable is left. A pretty=1 parameter of the chosen
// media type asks for indented output too. The router's coarser check comes first (checkAccept).
func (q *request) negotiateOutput(allowAs bool) (output, error) {
	s, r, media := q.s, q.r, q.mediaTypes()
	out := output{pretty: apirequest.Pretty(r)}
	accept := r.Header.Get("Accept")
	if strings.TrimSpace(accept) == "" {
		out.info = s.serializer(mediaJSON)
		return out, nil
	}
	for _, mr := range mediatype.ParseAccept(accept) {
		as := mr.Params["as"]
		if as != "" {
			if !allowAs || mr.Params["g"] != "meta.k8s.io" {
				continue
			}
			v := mr.Params["v"]
			switch as {
			case asTable:
				if v != "v1" && v != "v1beta1" {
					continue
				}
			case asPartialObjectMetadata, asPartialObjectMetadataList:
				if v != "v1" && v != "v1beta1" {
					continue
				}
			default:
				continue
			}
			out.as, out.asVersion = as, v
		}
		var mt string
		switch {
		case mr.Type == "*" && mr.Subtype == "*", mr.Type == "application" && mr.Subtype == "*":
			mt = mediaJSON
		case mr.Type == "application" && mr.Subtype == "json":
			mt = mediaJSON
		case mr.Type == "application" && mr.Subtype == "yaml":
			mt = mediaYAML
		case mr.Type == "application" && mr.Subtype == "vnd.kubernetes.protobuf" && slices.Contains(media, mediaProtobuf):
			mt = mediaProtobuf
		default:
			out.as, out.asVersion = "", ""
			continue
		}
		// Tables have no protobuf encoding: the real server serves them as JSON and YAML only.
		// PartialObjectMetadata has one, which client-go's metadata client asks for first.
		if out.as == asTable && mt == mediaProtobuf {
			out.as, out.asVersion = "", ""
			continue
		}
		out.info = s.serializer(mt)
		if mr.Params["pretty"] == "1" {
			out.pretty = true
		}
		return out, nil
	}
	return out, status.NotAcceptable(media...)
}

// checkAccept is the real server's router (go-restful) looking at the Accept header before any
// handler runs: unless one of its entries, parameters stripped, is */* or exactly a media type
// the route produces, the answer is a 406 worded by the router. The router compares the text
// as it is (case, q=0 and broken clauses included), so this deliberately does not parse media
// types. List and watch routes (stream)
// also produce the watch stream types. Finer negotiation is negotiateOutput's.
func checkAccept(r *http.Request, stream bool) error {
	accept := r.Header.Get("Accept")
	if accept == "" {
		return nil
	}
	for _, part := range strings.Split(accept, ",") {
		mt, _, _ := strings.Cut(part, ";")
		mt = strings.Trim(mt, " ")
		if mt == "*/*" || slices.Contains(supportedMediaTypes, mt) {
			return nil
		}
	}
	produces := supportedMediaTypes
	if stream {
		produces = append(slices.Clip(produces), mediaJSON+";stream=watch", mediaProtobuf+";stream=watch")
	}
	return errRouterNotAcceptable(produces)
}

var (
	supportedMediaTypes = []string{mediaJSON, mediaYAML, mediaProtobuf}
	jsonYAMLMediaTypes  = []string{mediaJSON, mediaYAML}
)

// negotiateInput picks the decoder for a request body from its Content-Type; a missing one is
// JSON. Anything else, protobuf for a version without it included, is 415.
func (q *request) negotiateInput() (runtime.SerializerInfo, error) {
	ct := q.r.Header.Get("Content-Type")
	if ct == "" {
		return q.s.serializer(mediaJSON), nil
	}
	media := q.mediaTypes()
	mt, err := mediatype.Parse(ct)
	if err == nil && slices.Contains(media, mt.String()) {
		return q.s.serializer(mt.String()), nil
	}
	return runtime.SerializerInfo{}, errUnsupportedBody(media)
}
