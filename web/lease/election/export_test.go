package election

// English is the controller's sentences in English by key, for the external tests.
func English() map[string]string { return english }
