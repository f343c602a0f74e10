package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/capdir/capdir/contract"
	"github.com/spf13/cobra"
)

func init() { register(exportCmd) }

// exportPage is how many rows export asks for at once (the server's maximum).
const exportPage = 1000

// exportCmd is `capdir export`: an HTTP client of a running server.
func exportCmd() *cobra.Command {
	var out, category, typ, enabled string
	var ndjson bool
	var sf *serverFlags
	cmd := &cobra.Command{
		Use:   "export",
		Short: "Write a running capdir server's directory as a JSON array (or NDJSON) that capdir import reads back",
		Long: "Write the directory of a running capdir server, in canonical order, as a JSON array of rows\n" +
			"(or NDJSON with --ndjson) to stdout or -o FILE. It pages through GET /api/directory; rows\n" +
			"carry every stored column (row_num, which is computed, is left out), so the output imports\n" +
			"back with capdir import. Writes made while it pages may or may not be included.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := sf.client()
			if err != nil {
				return err
			}
			q := url.Values{}
			for name, v := range map[string]string{"category": category, "type": typ, "enabled": enabled} {
				if v != "" {
					q.Set(name, v)
				}
			}
			w := cmd.OutOrStdout()
			var file *os.File
			if out != "" && out != "-" {
				file, err = os.CreateTemp(filepath.Dir(out), ".capdir-export-*")
				if err != nil {
					return err
				}
				defer os.Remove(file.Name()) // a no-op once renamed
				defer file.Close()
				w = file
			}
			bw := bufio.NewWriterSize(w, 256<<10)
			n, err := exportRows(cmd, c, q, bw, ndjson)
			if err == nil {
				err = bw.Flush()
			}
			if err == nil && file != nil {
				if err = file.Close(); err == nil {
					err = os.Rename(file.Name(), out)
				}
			}
			if err != nil {
				return err
			}
			if file != nil {
				fmt.Fprintf(cmd.ErrOrStderr(), "exported %d rows to %s\n", n, out)
			}
			return nil
		},
	}
	sf = addServerFlags(cmd, time.Minute)
	f := cmd.Flags()
	f.StringVarP(&out, "output", "o", "", "write to FILE instead of stdout (replaced atomically)")
	f.BoolVar(&ndjson, "ndjson", false, "write NDJSON, one row per line, instead of a JSON array")
	f.StringVar(&category, "category", "", "only rows of this category")
	f.StringVar(&typ, "type", "", "only rows of this type (fn, http, agent, flow)")
	f.StringVar(&enabled, "enabled", "", "only enabled (1) or disabled (0) rows")
	return cmd
}

// exportRows pages through GET /api/directory and writes every row to w. It skips a
// key it has already written, which a write between two pages could repeat.
func exportRows(cmd *cobra.Command, c *apiClient, q url.Values, w io.Writer, ndjson bool) (int, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	seen := map[string]bool{}
	n := 0
	for offset := 0; ; {
		q.Set("limit", strconv.Itoa(exportPage))
		q.Set("offset", strconv.Itoa(offset))
		var page struct {
			Rows  []contract.Row `json:"rows"`
			Total int            `json:"total"`
		}
		if err := c.doJSON(cmd.Context(), http.MethodGet, "/api/directory?"+q.Encode(), nil, &page); err != nil {
			return n, err
		}
		for _, r := range page.Rows {
			if seen[r.Key] {
				continue
			}
			seen[r.Key] = true
			r.RowNum = 0
			buf.Reset()
			switch {
			case ndjson:
			case n == 0:
				buf.WriteString("[\n")
			default:
				buf.WriteString(",\n")
			}
			if err := enc.Encode(&r); err != nil {
				return n, err
			}
			if !ndjson {
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
	if !ndjson {
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
