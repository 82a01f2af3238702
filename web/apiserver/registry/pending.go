package registry

import (
	"sync"
	"unsafe"

	"k8s.io/apimachinery/pkg/runtime"
)

// pendingDecoded holds the decoded form of each value being committed, keyed by the value's
// bytes: the store hands the watch the very slice it was given. A write's watch events are sent
// as its commit is published, before the writer has its answer and caches the decoded object;
// without this every watcher's first look at a renewal decoded its JSON once more.
type pendingDecoded struct {
	mu sync.Mutex
	m  map[*byte]runtime.Object
}

// put holds obj, the decoded form of value, until drop.
func (p *pendingDecoded) put(value []byte, obj runtime.Object) {
	if len(value) == 0 {
		return
	}
	p.mu.Lock()
	if p.m == nil {
		p.m = map[*byte]runtime.Object{}
	}
	p.m[unsafe.SliceData(value)] = obj
	p.mu.Unlock()
}

// copyOf returns a copy of the decoded form of value, while its write is being committed.
func (p *pendingDecoded) copyOf(value []byte) (runtime.Object, bool) {
	if len(value) == 0 {
		return nil, false
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	obj, ok := p.m[unsafe.SliceData(value)]
	if !ok {
		return nil, false
	}
	return obj.DeepCopyObject(), true
}

// drop ends the hold on value's decoded form: from then on the writer alone has it.
func (p *pendingDecoded) drop(value []byte) {
	if len(value) == 0 {
		return
	}
	p.mu.Lock()
	delete(p.m, unsafe.SliceData(value))
	p.mu.Unlock()
}
