package ws

// DisableFrameCache makes every subscription of s encode its own frames;
// benchmarks measure what the shared cache saves. Call before Serve.
func DisableFrameCache(s *Server) { s.noCache = true }
