package main

// AppsCmd groups the application commands (DESIGN §4).
type AppsCmd struct {
	Export AppsExportCmd `cmd:"" help:"Write an organization's applications as NDJSON or CSV, and optionally their documents."`
}
