package ask

// DeadDocs is how many dead documents x keeps until its next compaction.
func DeadDocs(x *Index) int {
	x.mu.RLock()
	defer x.mu.RUnlock()
	return x.dead
}
