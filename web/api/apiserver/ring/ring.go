// Package ring holds a bounded map that forgets its oldest entries first: the caches of
// decoded objects, encoded watch frames and parsed field sets.
package ring

import "sync"

// Ring is a map of at most size entries that forgets the oldest entry first. It is safe for
// concurrent use.
type Ring[K comparable, V any] struct {
	mu    sync.Mutex
	size  int
	m     map[K]V
	order []K
	next  int
}

// New returns an empty Ring of at most size entries.
func New[K comparable, V any](size int) *Ring[K, V] {
	return &Ring[K, V]{size: size, m: make(map[K]V, size), order: make([]K, 0, size)}
}

// Get returns the value stored under k.
func (r *Ring[K, V]) Get(k K) (V, bool) {
	r.mu.Lock()
	v, ok := r.m[k]
	r.mu.Unlock()
	return v, ok
}

// Add stores v under k unless k is present, and returns the value now stored.
func (r *Ring[K, V]) Add(k K, v V) V {
	r.mu.Lock()
	defer r.mu.Unlock()
	if prev, ok := r.m[k]; ok {
		return prev
	}
	if len(r.order) < r.size {
		r.order = append(r.order, k)
	} else {
		delete(r.m, r.order[r.next])
		r.order[r.next] = k
		r.next = (r.next + 1) % r.size
	}
	r.m[k] = v
	return v
}
