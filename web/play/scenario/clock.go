package scenario

// Speeds a run may go at: a quarter of real time up to four times as fast.
const (
	MinSpeed = 0.25
	MaxSpeed = 4.0
)
