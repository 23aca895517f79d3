package ws

// DisableFrameCache makes every subscription of s encode its own frames;
// benchmarks measure what the shared cache saves. Call before Serve.
func DisableFrameCache(s *Server) { s.noCache = true }

// Writers counts the connections of s whose writer goroutine runs and
// those whose writer holds batch buffers from the Server's pool.
func Writers(s *Server) (running, holding int) {
	s.mu.Lock()
	conns := make([]*conn, 0, len(s.conns))
	for c := range s.conns {
		conns = append(conns, c)
	}
	s.mu.Unlock()
	for _, c := range conns {
		c.q.mu.Lock()
		if c.q.running {
			running++
		} else if c.batch.m != nil {
			// read under q.mu after the writer's stop: it released first
			holding++
		}
		c.q.mu.Unlock()
	}
	return running, holding
}

// Parked counts the pumps of s waiting in their streams' lots, without a
// goroutine of their own.
func Parked(s *Server) int {
	s.ringsMu.Lock()
	rings := make([]*ring, 0, len(s.rings))
	for _, r := range s.rings {
		rings = append(rings, r)
	}
	s.ringsMu.Unlock()
	n := 0
	for _, r := range rings {
		r.lot.mu.Lock()
		n += len(r.lot.pumps)
		r.lot.mu.Unlock()
	}
	return n
}
