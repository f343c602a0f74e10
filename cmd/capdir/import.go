package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/capdir/capdir/api/client"
	"github.com/spf13/cobra"
)

func init() { register(importCmd) }

// importConfig is what capdir import does.
type importConfig struct {
	serverConfig
	File     string // a file of rows; "-" reads In
	Upsert   bool   // replace rows whose key is present instead of failing them
	OpenAPI  openAPIConfig
	D1       string // a file of wrangler d1 execute --json output
	SQLite   string // a SQLite database, or a wrangler d1 export SQL dump
	label    string // what the summary calls File, when set
	In       io.Reader
	Out, Err io.Writer // the summary; progress and failed rows
}

// importCmd is `capdir import FILE`: an HTTP client of a running server.
func importCmd() *cobra.Command {
	var cfg importConfig
	cmd := &cobra.Command{
		Use:   "import FILE | --openapi FILE|URL | --d1 FILE | --sqlite FILE",
		Short: "Import directory rows (rows, an OpenAPI spec, or the D1/SQLite directory table) into a running capdir server",
		Long: "Import directory rows into a running capdir server through POST /api/directory/import.\n" +
			"FILE holds a JSON array of row objects or NDJSON (one row object per line); - reads stdin.\n" +
			"Each row is validated like a POST (key and type required); a key already in the directory\n" +
			"fails that row with \"exists\" unless --upsert, which replaces it like a PUT. Rows that fail\n" +
			"are listed on stderr; the command exits non-zero when any row failed.\n\n" +
			"--openapi FILE|URL turns each operation of an OpenAPI 3.0 or 3.1 spec (JSON or YAML) into an\n" +
			"http row; a re-import updates the rows it made and appends nothing for those unchanged.\n" +
			"--d1 FILE reads the output of wrangler d1 execute --json --command \"SELECT * FROM directory\";\n" +
			"--sqlite FILE a SQLite database, or a wrangler d1 export SQL dump, holding a directory table.",
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			cfg.In, cfg.Out, cfg.Err = cmd.InOrStdin(), cmd.OutOrStdout(), cmd.ErrOrStderr()
			if len(args) == 1 {
				cfg.File = args[0]
			}
			return runImportFrom(cmd.Context(), cfg)
		},
	}
	addServerFlags(cmd, &cfg.serverConfig, 30*time.Minute)
	f := cmd.Flags()
	f.BoolVar(&cfg.Upsert, "upsert", false, "replace rows whose key is already in the directory (like PUT) instead of failing them")
	f.StringVar(&cfg.OpenAPI.Spec, "openapi", "", "an OpenAPI 3.0 or 3.1 spec (a file, an http(s) URL, or - for stdin): each operation becomes an http row")
	f.StringVar(&cfg.OpenAPI.Prefix, "prefix", "", "--openapi: put this in front of every key")
	f.StringVar(&cfg.OpenAPI.Server, "spec-server", "", "--openapi: the base URL of every target, instead of the spec's servers")
	f.StringVar(&cfg.OpenAPI.Category, "category", "", "--openapi: every row's category (default: the operation's first tag)")
	f.StringArrayVar(&cfg.OpenAPI.AuthEnv, "auth-env", nil, "--openapi: the environment variable holding the credential: NAME for every security scheme, or SCHEME=NAME (repeatable)")
	f.StringArrayVar(&cfg.OpenAPI.AuthOrigins, "auth-origin", nil, "--openapi: an origin (scheme://host[:port]) trusted with the --auth-env credential besides the spec's server's (an operation's or path's own servers), or a plain-http one (repeatable)")
	f.BoolVar(&cfg.OpenAPI.Prune, "prune", false, "--openapi: delete the rows this spec made whose operations are gone from it")
	f.BoolVar(&cfg.OpenAPI.DryRun, "dry-run", false, "--openapi: print the rows that would be written, and write nothing")
	f.StringVar(&cfg.D1, "d1", "", "a file of wrangler d1 execute --json output (SELECT * FROM directory)")
	f.StringVar(&cfg.SQLite, "sqlite", "", "a SQLite database, or a wrangler d1 export SQL dump, with a directory table")
	return cmd
}

// runImportFrom runs the import cfg names: exactly one of FILE, --openapi, --d1
// and --sqlite.
func runImportFrom(ctx context.Context, cfg importConfig) error {
	n := 0
	for _, s := range []string{cfg.File, cfg.OpenAPI.Spec, cfg.D1, cfg.SQLite} {
		if s != "" {
			n++
		}
	}
	if n != 1 {
		return errors.New("name one thing to import: FILE (rows), --openapi FILE|URL, --d1 FILE or --sqlite FILE")
	}
	if cfg.OpenAPI.Spec != "" {
		return runImportOpenAPI(ctx, cfg)
	}
	if flag := openAPIFlagSet(cfg.OpenAPI); flag != "" {
		return fmt.Errorf("%s is an option of --openapi only: an import of rows, --d1 or --sqlite writes its rows as they are, and has no dry run; leave %s out; nothing was imported", flag, flag)
	}
	if cfg.D1 != "" || cfg.SQLite != "" {
		return runImportTable(ctx, cfg)
	}
	return runImport(ctx, cfg)
}

// openAPIFlagSet names the first --openapi option o sets, "" when none: without
// --openapi it would be ignored (--dry-run's rows written).
func openAPIFlagSet(o openAPIConfig) string {
	switch {
	case o.DryRun:
		return "--dry-run"
	case o.Prune:
		return "--prune"
	case o.Prefix != "":
		return "--prefix"
	case o.Server != "":
		return "--spec-server"
	case o.Category != "":
		return "--category"
	case len(o.AuthEnv) > 0:
		return "--auth-env"
	case len(o.AuthOrigins) > 0:
		return "--auth-origin"
	}
	return ""
}

// runImport sends cfg.File's rows to the server, reporting progress and each failed
// row on cfg.Err and the summary on cfg.Out. It fails when any row failed.
func runImport(ctx context.Context, cfg importConfig) error {
	c, err := cfg.client()
	if err != nil {
		return err
	}
	name := cfg.File
	in := cfg.In
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
	if cfg.label != "" {
		name = cfg.label
	}
	br := bufio.NewReaderSize(in, 64<<10)
	contentType, err := sniffRows(br)
	if err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	stderr := cfg.Err
	progress := newImportProgress(br, stderr, contentType == "application/json")
	progress.waitForAnswer()
	res, err := c.Import(ctx, progress, client.ImportOptions{Upsert: cfg.Upsert, ContentType: contentType})
	progress.finish()
	// Rows written but not yet visible (504), or a body that stopped early (408,
	// 413): the answer still reports every row.
	var apiErr *client.Error
	reported := errors.As(err, &apiErr) && res.Error != ""
	if err != nil && !reported {
		return c.explain(err)
	}
	reportFailures(stderr, res.Failed)
	if res.FailedUnlisted > 0 {
		fmt.Fprintf(stderr, "%d more rows failed, not listed: the server lists the first %d\n", res.FailedUnlisted, len(res.Failed))
	}
	for _, w := range res.Warnings {
		fmt.Fprintf(stderr, "%s: written, but every call of it will fail with %s\n", rowWhere(w.Index, w.Line, w.Key), w.Warning)
	}
	failed := len(res.Failed) + res.FailedUnlisted
	total := res.OK + failed
	summary := fmt.Sprintf("imported %d of %d rows from %s; %d failed", res.OK, total, name, failed)
	if res.Unchanged > 0 {
		summary += fmt.Sprintf("; %d unchanged (nothing written for them)", res.Unchanged)
	}
	if len(res.Warnings) > 0 {
		summary += fmt.Sprintf("; %d cannot run as written", len(res.Warnings))
	}
	fmt.Fprintln(cfg.Out, summary)
	if res.Error != "" {
		return fmt.Errorf("the rows were written but the server says: %s", res.Error)
	}
	if failed > 0 {
		return fmt.Errorf("%d of %d rows failed", failed, total)
	}
	return nil
}

// existsShown is how many keys the summary of rows already in the directory
// names.
const existsShown = 5

// reportFailures prints the failed rows: one line each (and its repair), but the
// rows that failed only because their key exists summed up in one line, with the
// flag that replaces them.
func reportFailures(w io.Writer, failed []client.ImportFailure) {
	var exists []string
	for _, f := range failed {
		if strings.HasPrefix(f.Error, "exists: "+f.Key+" is already in the directory") {
			exists = append(exists, f.Key)
			continue
		}
		// The server suggests its query parameter; this command has a flag.
		fmt.Fprintf(w, "%s: %s\n", rowWhere(f.Index, f.Line, f.Key), strings.ReplaceAll(f.Error, client.UpsertQuery, "--upsert"))
		if f.HowToFix != "" {
			fmt.Fprintf(w, "    how to fix: %s\n", f.HowToFix)
		}
	}
	switch n := len(exists); {
	case n == 1:
		fmt.Fprintf(w, "1 row failed: %s is already in the directory; import with --upsert to replace it\n", exists[0])
	case n > 1:
		shown := strings.Join(exists[:min(n, existsShown)], ", ")
		if n > existsShown {
			shown += fmt.Sprintf(", and %d more", n-existsShown)
		}
		fmt.Fprintf(w, "%d rows failed: their keys are already in the directory (%s); import with --upsert to replace them\n", n, shown)
	}
}

// rowWhere names an import row: its index, its NDJSON line, its key.
func rowWhere(index, line int, key string) string {
	where := fmt.Sprintf("row %d", index)
	if line > 0 {
		where += fmt.Sprintf(" (line %d)", line)
	}
	if key != "" {
		where += " " + key
	}
	return where
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
