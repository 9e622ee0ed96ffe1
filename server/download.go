package server

import (
	"net/http"

	"github.com/labstack/echo/v4"

	"onboard/blobs"
)

// download serves a blob through a signed link (registry documents and
// uploads): the link's signature and expiry are the only credential. The
// answer is never cached, and its name and type are the ones the link was
// signed with. Range requests work (http.ServeContent).
func (s *Server) download(c echo.Context) error {
	f, d, err := s.svc.OpenDownload(http.MethodGet, c.Param("id"), c.QueryParams())
	if err != nil {
		return err
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return err
	}
	h := c.Response().Header()
	h.Set("Content-Type", d.ContentType)
	h.Set("Content-Disposition", blobs.ContentDisposition(d))
	h.Set("Cache-Control", "private, no-store")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "no-referrer")
	http.ServeContent(c.Response(), c.Request(), "", info.ModTime(), f)
	return nil
}
