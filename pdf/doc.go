// Package pdf reads what onboard needs to know about a PDF file: how many
// pages it has (PageCount), for the max_pages rule of strict document fields
// (docs/api.md). It parses only as much of the file as the page tree needs,
// with bounded work and memory on any input, and imports nothing but the
// standard library.
package pdf
