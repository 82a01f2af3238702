package changelog

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"

	"github.com/leaselab/leaselab/store"
)

// Writer writes a change log file. Call Flush at the end.
type Writer struct {
	bw  *bufio.Writer
	enc *json.Encoder
}

// NewWriter returns a Writer that writes to w, buffered.
func NewWriter(w io.Writer) *Writer {
	bw := bufio.NewWriter(w)
	enc := json.NewEncoder(bw)
	// Objects go out as they are stored, byte for byte: no escaping added to <, > and &.
	enc.SetEscapeHTML(false)
	return &Writer{bw: bw, enc: enc}
}

// Header writes a recording's header line; it comes before any change.
func (w *Writer) Header(h Header) error {
	if err := w.enc.Encode(&h); err != nil {
		return fmt.Errorf("write header: %w", err)
	}
	return nil
}

// Change writes the line of one committed change.
func (w *Writer) Change(ev store.Event) error {
	c := ChangeOf(ev)
	if err := w.enc.Encode(&c); err != nil {
		return fmt.Errorf("write change %d: %w", ev.Object.Revision, err)
	}
	return nil
}

// Flush writes what is buffered.
func (w *Writer) Flush() error { return w.bw.Flush() }
