package pgwire

// ResetFigures forgets what earlier runs on this target measured (the
// per-statement and pool-acquire histograms): a warm-up's probe runs must
// not count in the run measured after them on the same pool.
func (t *SQLTarget) ResetFigures() {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.hists = nil
}
