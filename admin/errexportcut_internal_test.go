package admin

// ErrExportCut is errExportCut, for the external tests (which import
// admintest, so cannot be in package admin).
var ErrExportCut = errExportCut
