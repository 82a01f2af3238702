package sqlite

import (
	"log/slog"

	"github.com/leaselab/leaselab/store"
)

// ackBatch is a committed batch waiting for its revision to be recorded before anyone is told.
type ackBatch struct {
	ops      []*writeOp
	outcomes []opOutcome
	events   []store.Event
	last     int64 // the batch's last revision; 0 when none of its ops changed anything
}

// ackQueue bounds the committed batches waiting for the record: the writer waits when the
// disk falls this far behind.
const ackQueue = 64

// ackLoop is the acknowledger: for every committed batch, in commit order, it makes the
// revision record durable (acked.go), then answers the callers and publishes the events. The
// writer commits the next batch meanwhile, so that the record's fdatasync overlaps the next
// commit instead of following each one; batches that queued up share one record. It returns
// when the writer closes db.acks.
func (db *DB) ackLoop() {
	defer close(db.writerDone)
	batch := make([]*ackBatch, 0, ackQueue)
	for b := range db.acks {
		batch = append(batch[:0], b)
	more:
		for len(batch) < ackQueue {
			select {
			case b, ok := <-db.acks:
				if !ok {
					break more
				}
				batch = append(batch, b)
			default:
				break more
			}
		}
		db.ack(batch)
		clear(batch)
	}
}

// ack records the last revision of batches and then tells everyone of them.
func (db *DB) ack(batches []*ackBatch) {
	var last int64
	for _, b := range batches {
		last = max(last, b.last)
	}
	if last > 0 {
		if err := db.acknowledge(last); err != nil {
			db.failAcknowledgement(batches, err)
			return
		}
	}
	for _, b := range batches {
		// The callers first: publishing readies the goroutine of every watch, and a caller
		// answered after that waits behind all of them before it can send its response.
		for i, op := range b.ops {
			op.done <- writeResult{obj: b.outcomes[i].obj, err: b.outcomes[i].err}
		}
		if len(b.events) > 0 {
			db.hub.publish(b.events)
		}
	}
}

// failAcknowledgement answers the callers of committed batches whose revision could not be
// recorded: the writes are in the database, but nobody is told of a revision that a lost -wal
// could take back unnoticed. Watches end with the error, so that their clients list again and
// see the database as it is.
func (db *DB) failAcknowledgement(batches []*ackBatch, err error) {
	db.noteWriteFailure(err)
	db.logger.Error("write committed but not acknowledged: the revision record cannot be written",
		slog.String(logKeyPath, ackedPath(db.path)), slog.Any(logKeyError, err))
	for _, b := range batches {
		for _, op := range b.ops {
			op.done <- writeResult{err: err}
		}
	}
	db.hub.endAll(err, false)
}
