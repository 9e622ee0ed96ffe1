package web

import (
	"strconv"

	jsonv2 "github.com/go-json-experiment/json"
	jsonv1 "github.com/go-json-experiment/json/v1"
	"github.com/labstack/echo/v4"
)

// WriteJSON renders v with the given status. It encodes as encoding/json
// does, with the JSON v2 implementation in that mode (DefaultOptionsV1):
// the same bytes with less work.
func WriteJSON(c echo.Context, status int, v any) error {
	b, err := jsonv2.Marshal(v, jsonv1.DefaultOptionsV1())
	if err != nil {
		return err
	}
	return WriteRawJSON(c, status, b)
}

// WriteRawJSON sends bytes that are already JSON, with their
// Content-Length: net/http would otherwise send a body of more than 2 KiB
// chunked.
func WriteRawJSON(c echo.Context, status int, b []byte) error {
	c.Response().Header().Set(echo.HeaderContentLength, strconv.Itoa(len(b)))
	return c.Blob(status, echo.MIMEApplicationJSON, b)
}
