package server

import (
	"io"
	"net/http"

	"github.com/labstack/echo/v4"
)

// CeilingKV is the raw key-value database the ceiling handler serves
// (storage.RawKV).
type CeilingKV interface {
	Get(key string) (value []byte, ok bool, err error)
	Put(key string, value []byte) error
}

// maxCeilingValue bounds the body of a ceiling insert.
const maxCeilingValue = 1 << 20

// CeilingHandler serves kv with echo and nothing else: GET /kv/:key
// answers the stored JSON value, POST /kv/:key stores the body under key
// (204 once the commit is on disk). With no authentication, middleware or
// domain logic, it is the ceiling onboard bench measures the API against:
// a point read and a durable insert through the same HTTP stack.
func CeilingHandler(kv CeilingKV) http.Handler {
	e := echo.New()
	e.HideBanner, e.HidePort = true, true
	e.GET("/kv/:key", func(c echo.Context) error {
		v, ok, err := kv.Get(c.Param("key"))
		if err != nil {
			return err
		}
		if !ok {
			return echo.ErrNotFound
		}
		return c.Blob(http.StatusOK, echo.MIMEApplicationJSON, v)
	})
	e.POST("/kv/:key", func(c echo.Context) error {
		v, err := io.ReadAll(http.MaxBytesReader(c.Response(), c.Request().Body, maxCeilingValue))
		if err != nil {
			return echo.NewHTTPError(http.StatusRequestEntityTooLarge)
		}
		if err := kv.Put(c.Param("key"), v); err != nil {
			return err
		}
		return c.NoContent(http.StatusNoContent)
	})
	return e
}
