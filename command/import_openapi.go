package command

import (
	"context"

	imports "github.com/capdir/capdir/api/importer"
	"github.com/capdir/capdir/api/importer/openapi"
)

// ImportOpenAPI turns the OpenAPI document spec (at most openapi.MaxSpecBytes)
// into one http row per operation (see openapi.Convert) and writes them with
// ImportItems as the import of the spec's source (in.Source is set to the one
// Convert names: the document's title and the key prefix). A spec refused whole is
// openapi's error (openapi.ErrSpec, ErrTooLarge, ErrOptions, ErrCredentialOrigin)
// and writes nothing. The report names the origins the rows' credentials go to.
// Once rows are being written the import runs to its end, whatever ctx does; when
// it ends in an error the error is a *SpecImportIncompleteError that reports every
// operation.
func (d *Directory) ImportOpenAPI(ctx context.Context, spec []byte, opt openapi.Options, in ItemsImport) (imports.SpecReport, error) {
	conv, err := openapi.Convert(ctx, spec, opt)
	if err != nil {
		return imports.SpecReport{}, err
	}
	in.Source = conv.Source
	res, err := d.ImportItems(context.WithoutCancel(ctx), conv.Items, in)
	var sent []string // the keys of the rows written, or a dry run's to write
	for _, o := range res.Items {
		if o.Action == imports.Created || o.Action == imports.Updated || o.Action == imports.Unchanged {
			sent = append(sent, o.Key)
		}
	}
	report := imports.SpecReport{Spec: conv.Title, Version: conv.Version, Operations: len(conv.Items), Report: res,
		CredentialOrigins: conv.CredentialOrigins(sent)}
	if err != nil {
		return report, &SpecImportIncompleteError{Report: report, Err: err}
	}
	return report, nil
}
