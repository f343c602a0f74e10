package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/capdir/capdir/api"

	"github.com/spf13/cobra"
)

func init() { register(importCmd) }

// importCmd is `capdir import FILE`: an HTTP client of a running server.
func importCmd() *cobra.Command {
	var upsert bool
	var sf *serverFlags
	cmd := &cobra.Command{
		Use:   "import FILE",
		Short: "Import directory rows (a JSON array or NDJSON; - for stdin) into a running capdir server",
		Long: "Import directory rows into a running capdir server through POST /api/directory/import.\n" +
			"FILE holds a JSON array of row objects or NDJSON (one row object per line); - reads stdin.\n" +
			"Each row is validated like a POST (key and type required); a key already in the directory\n" +
			"fails that row with \"exists\" unless --upsert, which replaces it like a PUT. Rows that fail\n" +
			"are listed on stderr; the command exits non-zero when any row failed.",
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := sf.client()
			if err != nil {
				return err
			}
			name := args[0]
			var in io.Reader = cmd.InOrStdin()
			if name != "-" {
				f, err := os.Open(name)
				if err != nil {
					return err
				}
				defer f.Close()
				in = f
			} else {
				name = "stdin"
			}
			br := bufio.NewReaderSize(in, 64<<10)
			contentType, err := sniffRows(br)
			if err != nil {
				return fmt.Errorf("%s: %w", name, err)
			}
			path := "/api/directory/import"
			if upsert {
				path += api.UpsertQuery
			}
			stderr := cmd.ErrOrStderr()
			progress := newImportProgress(br, stderr, contentType == "application/json")
			progress.waitForAnswer()
			var res api.ImportResult
			err = c.send(cmd.Context(), http.MethodPost, path, contentType, progress, &res)
			progress.finish()
			var apiErr *apiError
			if errors.As(err, &apiErr) && apiErr.Status == http.StatusGatewayTimeout {
				// Written but not yet visible: the body still reports every row.
				if json.Unmarshal(apiErr.Body, &res) != nil {
					return err
				}
			} else if err != nil {
				return err
			}
			for _, f := range res.Failed {
				where := fmt.Sprintf("row %d", f.Index)
				if f.Line > 0 {
					where += fmt.Sprintf(" (line %d)", f.Line)
				}
				if f.Key != "" {
					where += " " + f.Key
				}
				// The server suggests its query parameter; this command has a flag.
				fmt.Fprintf(stderr, "%s: %s\n", where, strings.ReplaceAll(f.Error, api.UpsertQuery, "--upsert"))
				if f.HowToFix != "" {
					fmt.Fprintf(stderr, "    how to fix: %s\n", f.HowToFix)
				}
			}
			total := res.OK + len(res.Failed)
			fmt.Fprintf(cmd.OutOrStdout(), "imported %d of %d rows from %s; %d failed\n", res.OK, total, name, len(res.Failed))
			if res.Error != "" {
				return fmt.Errorf("the rows were written but the server says: %s", res.Error)
			}
			if len(res.Failed) > 0 {
				return fmt.Errorf("%d of %d rows failed", len(res.Failed), total)
			}
			return nil
		},
	}
	sf = addServerFlags(cmd, 30*time.Minute)
	cmd.Flags().BoolVar(&upsert, "upsert", false, "replace rows whose key is already in the directory (like PUT) instead of failing them")
	return cmd
}

// sniffRows tells a JSON array from NDJSON by the first byte that is not blank,
// without consuming it.
func sniffRows(br *bufio.Reader) (string, error) {
	for i := 1; ; i++ {
		b, err := br.Peek(i)
		if err == io.EOF || (err != nil && len(b) < i) {
			return "", errors.New("no rows: the input is empty")
		}
		if err != nil {
			return "", err
		}
		switch b[i-1] {
		case ' ', '\t', '\r', '\n':
			if i == br.Size() {
				if _, err := br.Discard(i); err != nil {
					return "", err
				}
				i = 0
			}
			continue
		case '[':
			return "application/json", nil
		}
		return "application/x-ndjson", nil
	}
}
