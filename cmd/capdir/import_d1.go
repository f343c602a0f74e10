package main

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"strings"

	"github.com/capdir/capdir/api/importer/d1"
)

// runImportTable reads the directory table of cfg.D1 (wrangler d1 execute --json
// output) or cfg.SQLite (a database or SQL dump) whole into a temporary NDJSON
// file, so that an input that cannot be read is refused before any row of it is
// sent, then imports that file like capdir import FILE (--upsert replaces present
// keys). Columns that are not the directory's are named on cfg.Err.
func runImportTable(ctx context.Context, cfg importConfig) error {
	name := cfg.D1
	if cfg.SQLite != "" {
		name = cfg.SQLite
	}
	spool, err := os.CreateTemp("", "capdir-import-*.ndjson")
	if err != nil {
		return err
	}
	defer os.Remove(spool.Name())
	defer spool.Close()
	w := bufio.NewWriterSize(spool, 64<<10)
	write := func(row []byte) error {
		w.Write(row)
		return w.WriteByte('\n')
	}
	var res d1.Result
	if cfg.SQLite != "" {
		res, err = d1.ReadSQLite(ctx, cfg.SQLite, write)
	} else {
		res, err = readD1File(cfg.D1, write)
	}
	if err == nil {
		err = w.Flush()
	}
	if err != nil {
		return fmt.Errorf("%s: %w; nothing was imported", name, err)
	}
	if res.Rows == 0 {
		return fmt.Errorf("%s: the directory table has no rows; nothing was imported", name)
	}
	if len(res.Ignored) > 0 {
		fmt.Fprintf(cfg.Err, "%s: the columns %s are not the directory's; their values are not imported\n", name, strings.Join(res.Ignored, ", "))
	}
	cfg.File, cfg.label = spool.Name(), name
	return runImport(ctx, cfg)
}

func readD1File(path string, fn d1.RowFunc) (d1.Result, error) {
	f, err := os.Open(path)
	if err != nil {
		return d1.Result{}, err
	}
	defer f.Close()
	return d1.ReadJSON(bufio.NewReaderSize(f, 64<<10), fn)
}
