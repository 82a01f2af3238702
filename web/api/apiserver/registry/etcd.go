package registry

import (
	"bytes"
	"fmt"

	"google.golang.org/protobuf/encoding/protowire"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// What etcd takes in one write, as kube-apiserver's storage meets it: etcd's own limit on a
// request (--max-request-bytes, 1.5 MiB by default) and the etcd client's limit on what it
// sends (2 MiB, which kube-apiserver does not change).
const (
	etcdMaxRequestBytes = 1536 * 1024
	etcdClientMaxSend   = 2 << 20
	// etcdKeyRoom bounds what a write adds to the object besides its key: the transaction's
	// framing and the raft request's header.
	etcdKeyRoom = 64
)

// etcdRefusal is the error kube-apiserver answers a write with when etcd refuses it for its
// size, nil when etcd would take it. rev is the revision an update expects, 0 for a create.
// The size is that of the object as kube-apiserver stores it (protobuf), computed only when
// the stored JSON, always the larger, comes near the limit.
func (ks *Store) etcdRefusal(obj runtime.Object, acc metav1.Object, value []byte, rev int64) error {
	key := ks.etcdKey(acc.GetNamespace(), acc.GetName())
	if len(value)+len(key)+etcdKeyRoom <= etcdMaxRequestBytes {
		return nil
	}
	n, err := ks.protobufSize(obj)
	if err != nil {
		return err
	}
	txn := txnSize(key, n, rev)
	if txn > etcdClientMaxSend {
		// The etcd client's gRPC refuses to send it: kube-apiserver answers with gRPC's error.
		return InternalError(fmt.Sprintf("rpc error: code = ResourceExhausted desc = trying to send message larger than max (%d vs. %d)", txn, etcdClientMaxSend))
	}
	if raftRequestSize(txn) > etcdMaxRequestBytes {
		return InternalError("etcdserver: request is too large")
	}
	return nil
}

// etcdKey is where kube-apiserver keeps an object in etcd.
func (ks *Store) etcdKey(namespace, name string) string {
	key := "/registry/" + ks.kind.Resource + "/"
	if namespace != "" {
		key += namespace + "/"
	}
	return key + name
}

// protobufSize is the size of obj as kube-apiserver stores it: Kubernetes protobuf in its
// envelope, at the storage version.
func (ks *Store) protobufSize(obj runtime.Object) (int, error) {
	info, ok := runtime.SerializerInfoForMediaType(ks.r.reg.Codecs.SupportedMediaTypes(), runtime.ContentTypeProtobuf)
	if !ok {
		return 0, InternalError("no protobuf serializer")
	}
	var buf bytes.Buffer
	enc := ks.r.reg.Codecs.EncoderForVersion(info.Serializer, ks.kind.StorageGVK().GroupVersion())
	if err := enc.Encode(obj, &buf); err != nil {
		return 0, err
	}
	return buf.Len(), nil
}

// txnSize is the size of the transaction kube-apiserver sends etcd to write a value of n bytes
// at key (the etcd client's OptimisticPut): compare the key's mod revision with rev, put on
// success, and for an update (rev > 0) get the key on failure.
func txnSize(key string, n int, rev int64) int {
	k := len(key)
	compare := tagged(2, protowire.SizeVarint(2)) + sizeBytes(3, k) + tagged(6, protowire.SizeVarint(uint64(rev)))
	put := sizeBytes(1, k) + sizeBytes(2, n)
	size := sizeBytes(1, compare) + sizeBytes(2, sizeBytes(2, put))
	if rev > 0 {
		size += sizeBytes(3, sizeBytes(1, sizeBytes(1, k)))
	}
	return size
}

// raftRequestSize is the size of etcd's raft request around a transaction of txn bytes: the
// header with the request's ID (a full 64-bit varint), then the transaction; etcd compares
// it with --max-request-bytes.
func raftRequestSize(txn int) int {
	header := tagged(1, protowire.SizeVarint(1<<63))
	return sizeBytes(100, header) + sizeBytes(7, txn)
}

// tagged is the size of a field numbered num whose value takes n bytes.
func tagged(num protowire.Number, n int) int { return protowire.SizeTag(num) + n }

// sizeBytes is the size of a length-delimited field numbered num of n bytes.
func sizeBytes(num protowire.Number, n int) int { return tagged(num, protowire.SizeBytes(n)) }

// storable is the value to store for obj, checked against etcd's limits. A value over them is
// tried again without managedFields, as kube-apiserver's create, update and patch handlers do
// (but for an apply), since those can be large and the server may drop them.
func (ks *Store) storable(obj runtime.Object, acc metav1.Object, value []byte, rev int64, applied bool) ([]byte, error) {
	err := ks.etcdRefusal(obj, acc, value, rev)
	if err == nil || applied || len(acc.GetManagedFields()) == 0 {
		return value, err
	}
	acc.SetManagedFields(nil)
	if value, err = ks.r.encodeStored(ks.kind, obj); err != nil {
		return nil, err
	}
	return value, ks.etcdRefusal(obj, acc, value, rev)
}
