package onboarding

// TEMPORARY until the view move lands (helper wt-view); not to be merged.

// ViewOptions placeholder.
type ViewOptions struct{ Links, WithoutSensitive bool }

// View placeholder.
func (s *Service) View(app *Application, opts ViewOptions) (any, error) { return app.ID, nil }

// Timestamp placeholder.
func Timestamp(t interface{ String() string }) string { return t.String() }
