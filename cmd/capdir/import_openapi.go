package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/capdir/capdir/api/client"
	"github.com/capdir/capdir/api/importer"
	"github.com/capdir/capdir/api/importer/openapi"
)

// specFetchTimeout bounds reading a spec from a URL.
const specFetchTimeout = 30 * time.Second

// openAPIConfig is what capdir import --openapi does besides reaching the server.
type openAPIConfig struct {
	Spec string // a file, or an http(s) URL
	client.SpecImportOptions
}

// runImportOpenAPI reads cfg.OpenAPI.Spec and sends it to the server's OpenAPI
// import; it reports each operation the import refused or failed on cfg.Err, and
// the summary (and with --dry-run the rows, one JSON object a line) on cfg.Out.
// It fails when any row failed; an operation the row format cannot express is
// reported, not a failure.
func runImportOpenAPI(ctx context.Context, cfg importConfig) error {
	c, err := cfg.client()
	if err != nil {
		return err
	}
	spec, base, err := readSpec(ctx, cfg.OpenAPI.Spec, cfg.In)
	if err != nil {
		return err
	}
	cfg.OpenAPI.Base = base // a relative server URL of the spec resolves against it
	res, err := c.ImportSpec(ctx, bytes.NewReader(spec), cfg.OpenAPI.SpecImportOptions)
	if err != nil && res.Error == "" {
		return c.explain(err)
	}
	reportSpec(cfg.Out, cfg.Err, res)
	if res.Error != "" {
		return fmt.Errorf("the rows reported were written but the server says: %s", res.Error)
	}
	if res.Failed > 0 {
		return fmt.Errorf("%d of %d operations failed", res.Failed, res.Operations)
	}
	return nil
}

// readSpec reads a spec of at most openapi.MaxSpecBytes from a file, stdin ("-")
// or an http(s) URL; base is the URL.
func readSpec(ctx context.Context, from string, stdin io.Reader) (spec []byte, base string, err error) {
	var r io.Reader
	switch {
	case from == "-":
		r = stdin
	case strings.HasPrefix(from, "http://") || strings.HasPrefix(from, "https://"):
		ctx, cancel := context.WithTimeout(ctx, specFetchTimeout)
		defer cancel()
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, from, nil)
		if err != nil {
			return nil, "", err
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return nil, "", fmt.Errorf("reading the spec: %w", err)
		}
		defer resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			return nil, "", fmt.Errorf("reading the spec: %s answered %s", from, resp.Status)
		}
		r, base = resp.Body, openapi.SpecBase(from) // the server is told no credential of the spec's URL
	default:
		f, err := os.Open(from)
		if err != nil {
			return nil, "", err
		}
		defer f.Close()
		r = f
	}
	spec, err = io.ReadAll(io.LimitReader(r, openapi.MaxSpecBytes+1))
	if err != nil {
		return nil, "", fmt.Errorf("reading the spec: %w", err)
	}
	if len(spec) > openapi.MaxSpecBytes {
		return nil, "", fmt.Errorf("%s: the spec is more than %d bytes, the limit; split it, or import a part of it", from, openapi.MaxSpecBytes)
	}
	return spec, base, nil
}

// reportSpec writes the refused and failed operations (and notes) on stderr, and
// the dry run's rows, the origins the credentials go to and the summary on stdout.
func reportSpec(stdout, stderr io.Writer, res importer.SpecReport) {
	enc := json.NewEncoder(stdout)
	enc.SetEscapeHTML(false)
	for _, it := range res.Items {
		switch {
		case it.Action == importer.Refused || it.Action == importer.Failed:
			fmt.Fprintf(stderr, "%s %s: %s: %s\n", it.Source, it.Key, it.Action, it.Error)
		case res.DryRun && it.Row != nil:
			enc.Encode(it.Row)
		}
		for _, n := range it.Notes {
			fmt.Fprintf(stderr, "%s %s: note: %s\n", it.Source, it.Key, n)
		}
		for _, w := range it.Warnings {
			fmt.Fprintf(stderr, "%s %s: warning: %s\n", it.Source, it.Key, w)
		}
	}
	for _, key := range res.Vanished {
		what := "is no longer in the spec; kept (--prune deletes it)"
		if len(res.Pruned) > 0 {
			what = "is no longer in the spec; deleted"
			if res.DryRun {
				what = "is no longer in the spec; would be deleted"
			}
		}
		fmt.Fprintf(stderr, "%s %s\n", key, what)
	}
	sent := "credentials sent to"
	if res.DryRun {
		sent = "credentials would be sent to"
	}
	for _, o := range res.CredentialOrigins {
		rows := "rows"
		if o.Rows == 1 {
			rows = "row"
		}
		fmt.Fprintf(stdout, "%s %s: %s (%d %s)\n", sent, o.Origin, strings.Join(o.Env, ", "), o.Rows, rows)
	}
	verb := "imported"
	if res.DryRun {
		verb = "dry run, nothing written:"
	}
	fmt.Fprintf(stdout, "%s %d operations of %q %s: %d created, %d updated, %d unchanged, %d refused, %d failed; %d no longer in the spec\n",
		verb, res.Operations, res.Spec, res.Version, res.Created, res.Updated, res.Unchanged, res.Refused, res.Failed, len(res.Vanished))
}
