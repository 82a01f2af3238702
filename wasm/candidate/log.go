package candidate

import "time"

// DefaultLogLimit is how many decisions the log keeps.
const DefaultLogLimit = 200

// decisionLog is the candidate's decision log: the newest entries, oldest
// first, with repeated decisions folded into the newest entry. The
// Candidate's mutex guards it.
type decisionLog struct {
	limit   int
	entries []LogEntry
}

// add appends line, stamped at (the candidate's own clock). A line with a
// fold key merges into the newest entry if that one has the same kind and
// key: renewals, waiting for the same holder, the same error.
func (l *decisionLog) add(at time.Time, line said) {
	if n := len(l.entries); n > 0 && line.fold != "" {
		if last := &l.entries[n-1]; last.Kind == line.kind && last.fold == line.fold {
			last.At, last.Text, last.Msg = at, line.text, line.msg
			last.Count++
			return
		}
	}
	l.entries = append(l.entries, LogEntry{At: at, Kind: line.kind, Text: line.text, Msg: line.msg, Count: 1, fold: line.fold})
	if len(l.entries) > l.limit {
		l.entries = append(l.entries[:0], l.entries[len(l.entries)-l.limit:]...)
	}
}

// newestFirst returns a copy of the entries, newest first.
func (l *decisionLog) newestFirst() []LogEntry {
	out := make([]LogEntry, len(l.entries))
	for i, e := range l.entries {
		out[len(l.entries)-1-i] = e
	}
	return out
}
