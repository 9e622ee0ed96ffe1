package web

import (
	"crypto/rand"
	"encoding/hex"
	"strings"

	"github.com/labstack/echo/v4"
)

// RequestID tags the response with a request id, which the request log
// and the error log name: the client's X-Request-Id when it is sane
// (requestIDOK), a new random one otherwise.
func RequestID(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		id := c.Request().Header.Get(echo.HeaderXRequestID)
		if !requestIDOK(id) {
			var b [8]byte
			_, _ = rand.Read(b[:])
			id = hex.EncodeToString(b[:])
		}
		c.Response().Header().Set(echo.HeaderXRequestID, id)
		return next(c)
	}
}

// MaxRequestID bounds the X-Request-Id a client may choose.
const MaxRequestID = 128

// requestIDOK reports whether a client's X-Request-Id may be kept: 1 to
// MaxRequestID letters, digits and "-_.:+/=" (UUIDs, ULIDs, hex and base64
// ids), nothing that could break a log line or a header.
func requestIDOK(id string) bool {
	if id == "" || len(id) > MaxRequestID {
		return false
	}
	for i := 0; i < len(id); i++ {
		switch b := id[i]; {
		case b >= 'a' && b <= 'z', b >= 'A' && b <= 'Z', b >= '0' && b <= '9':
		case strings.IndexByte("-_.:+/=", b) >= 0:
		default:
			return false
		}
	}
	return true
}
