package server

// The applicant's form: server-rendered pages under /a/{link_slug}.

type pages struct{}

func mustParsePages() *pages { return &pages{} }

func (s *Server) formRoutes() {}
