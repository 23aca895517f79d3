package sqlite

// CheckpointRound returns a channel closed when the round of the
// background checkpoint now running, or else the next one, has ended.
func CheckpointRound(s *Store) <-chan struct{} { return *s.checkpointed.Load() }
