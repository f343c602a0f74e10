package client

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/url"
	"strconv"

	"github.com/capdir/capdir/api/answer"
)

// CreateRow writes a new row (POST /api/directory). row is anything that encodes
// to the row's JSON object (a map, a struct, a json.RawMessage); key and type are
// required. A present key is an *Error with Status 409.
func (c *Client) CreateRow(ctx context.Context, row any) (WriteResult, error) {
	var res WriteResult
	status, err := c.do(ctx, http.MethodPost, "/api/directory", row, &res)
	res.Created = status == http.StatusCreated
	return res, err
}

// PutRow replaces key's whole row, creating it when absent (WriteResult.Created).
func (c *Client) PutRow(ctx context.Context, key string, row any) (WriteResult, error) {
	var res WriteResult
	status, err := c.do(ctx, http.MethodPut, rowPath(key), row, &res)
	res.Created = status == http.StatusCreated
	return res, err
}

// PatchRow changes some fields of key's row; the fields outside the PATCH
// allow-list come back in WriteResult.Ignored.
func (c *Client) PatchRow(ctx context.Context, key string, fields any) (WriteResult, error) {
	var res WriteResult
	_, err := c.do(ctx, http.MethodPatch, rowPath(key), fields, &res)
	return res, err
}

// GetRow reads key's row, with its row_num. An absent key is an *Error with Status 404.
func (c *Client) GetRow(ctx context.Context, key string) (answer.Row, error) {
	var row answer.Row
	_, err := c.do(ctx, http.MethodGet, rowPath(key), nil, &row)
	return row, err
}

// History reads every mutation of key in log order, also after the row was
// deleted. A key never written is an *Error with Status 404.
func (c *Client) History(ctx context.Context, key string) (RowHistory, error) {
	var h RowHistory
	_, err := c.do(ctx, http.MethodGet, rowPath(key)+"/history", nil, &h)
	return h, err
}

// DeleteRow removes key's row. An absent key is an *Error with Status 404.
func (c *Client) DeleteRow(ctx context.Context, key string) error {
	_, err := c.do(ctx, http.MethodDelete, rowPath(key), nil, nil)
	return err
}

// ListRows reads one page of rows in canonical order.
func (c *Client) ListRows(ctx context.Context, o ListOptions) (RowPage, error) {
	q := filter(o.Category, o.Type, o.Enabled)
	if o.Limit > 0 {
		q.Set("limit", strconv.Itoa(o.Limit))
	}
	if o.Offset > 0 {
		q.Set("offset", strconv.Itoa(o.Offset))
	}
	var page RowPage
	_, err := c.do(ctx, http.MethodGet, "/api/directory"+query(q), nil, &page)
	return page, err
}

func filter(category, typ, enabled string) url.Values {
	q := url.Values{}
	for name, v := range map[string]string{"category": category, "type": typ, "enabled": enabled} {
		if v != "" {
			q.Set(name, v)
		}
	}
	return q
}

func query(q url.Values) string {
	if len(q) == 0 {
		return ""
	}
	return "?" + q.Encode()
}

// Import sends rows (a JSON array of row objects, or NDJSON) to
// POST /api/directory/import, streaming body as it reads it. Rows that fail are
// reported in ImportResult.Failed, not as an error. When rows were written but the
// import ended in an error (HTTP 504: they are not yet visible; 408 or 413: an
// NDJSON body stopped early, and the rows before that point were imported), the
// result still reports every row, with its Error set, and err is the *Error.
func (c *Client) Import(ctx context.Context, body io.Reader, o ImportOptions) (ImportResult, error) {
	path := "/api/directory/import"
	if o.Upsert {
		path += UpsertQuery
	}
	var res ImportResult
	_, err := c.send(ctx, http.MethodPost, path, o.ContentType, body, &res)
	var e *Error
	if errors.As(err, &e) {
		// An import report has "failed" (an array, perhaps empty); a refusal of the
		// whole body has only "error".
		var report struct {
			ImportResult
			Failed *[]ImportFailure `json:"failed"`
		}
		res = ImportResult{}
		if json.Unmarshal(e.Body, &report) == nil && report.Failed != nil {
			res = report.ImportResult
			res.Failed = *report.Failed
		}
	}
	return res, err
}

// exportPage is how many rows Export asks for at once (the server's maximum).
const exportPage = 1000

// Export writes the directory, in canonical order, to w as a JSON array (or NDJSON)
// that Import reads back: every stored column, row_num left out. It pages through
// GET /api/directory and skips a key it has already written, which a write between
// two pages could repeat; writes made while it pages may or may not be included.
// It returns how many rows it wrote.
func (c *Client) Export(ctx context.Context, w io.Writer, o ExportOptions) (int, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	seen := map[string]bool{}
	n := 0
	for offset := 0; ; {
		q := filter(o.Category, o.Type, o.Enabled)
		q.Set("limit", strconv.Itoa(exportPage))
		q.Set("offset", strconv.Itoa(offset))
		if o.At != "" {
			q.Set("at", o.At)
		}
		var page RowPage
		if _, err := c.do(ctx, http.MethodGet, "/api/directory?"+q.Encode(), nil, &page); err != nil {
			return n, err
		}
		if page.At > 0 {
			o.At = strconv.FormatUint(page.At, 10)
		}
		for _, r := range page.Rows {
			if seen[r.Key] {
				continue
			}
			seen[r.Key] = true
			r.RowNum = 0
			buf.Reset()
			switch {
			case o.NDJSON:
			case n == 0:
				buf.WriteString("[\n")
			default:
				buf.WriteString(",\n")
			}
			if err := enc.Encode(&r); err != nil {
				return n, err
			}
			if !o.NDJSON {
				buf.Truncate(buf.Len() - 1) // the encoder's newline; the separator adds one
			}
			if _, err := w.Write(buf.Bytes()); err != nil {
				return n, err
			}
			n++
		}
		offset += len(page.Rows)
		if len(page.Rows) == 0 || offset >= page.Total {
			break
		}
	}
	if !o.NDJSON {
		end := "\n]\n"
		if n == 0 {
			end = "[]\n"
		}
		if _, err := io.WriteString(w, end); err != nil {
			return n, err
		}
	}
	return n, nil
}

// SpecImportOptions are the options of ImportSpec; the zero value takes the spec
// as it is.
type SpecImportOptions struct {
	Prefix   string   // put in front of every key
	Server   string   // replaces the spec's servers
	Category string   // every row's category (else the operation's first tag)
	AuthEnv  []string // NAME for every security scheme, or SCHEME=NAME
	// AuthOrigins are origins (scheme://host[:port]) trusted with the credential
	// besides the spec's server's, or plain-http ones on a host that is not loopback.
	AuthOrigins []string
	Base        string // the URL the spec was read from, for its relative server URLs
	Prune       bool   // delete the rows of this spec whose operations are gone
	DryRun      bool   // decide everything, write nothing
}

// ImportSpec sends an OpenAPI 3.0 or 3.1 document (JSON or YAML) to POST
// /api/directory/import?format=openapi: each operation becomes an http row, or a
// refusal that says why it cannot be one. When rows were written but the import
// ended in an error, the error comes with the report (its Error set).
func (c *Client) ImportSpec(ctx context.Context, spec io.Reader, o SpecImportOptions) (answer.SpecReport, error) {
	q := url.Values{"format": {"openapi"}}
	for name, v := range map[string]string{"prefix": o.Prefix, "server": o.Server, "category": o.Category, "base": o.Base} {
		if v != "" {
			q.Set(name, v)
		}
	}
	q["auth_env"] = o.AuthEnv
	q["auth_origin"] = o.AuthOrigins
	if o.Prune {
		q.Set("prune", "true")
	}
	if o.DryRun {
		q.Set("dry_run", "true")
	}
	var res answer.SpecReport
	_, err := c.send(ctx, http.MethodPost, "/api/directory/import?"+q.Encode(), "application/octet-stream", spec, &res)
	var e *Error
	if errors.As(err, &e) {
		// Rows were written but the import ended in an error: the answer still
		// reports every operation (and says why in "error"); a refusal of the whole
		// spec has only "error".
		res = answer.SpecReport{}
		if json.Unmarshal(e.Body, &res) != nil || res.Items == nil {
			res = answer.SpecReport{}
		}
	}
	return res, err
}
