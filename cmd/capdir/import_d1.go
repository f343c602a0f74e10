package main

import (
	"context"
	"errors"
)

func runImportTable(ctx context.Context, cfg importConfig) error {
	return errors.New("not yet")
}
