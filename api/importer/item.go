// Package importer holds what every importer of the directory shares: the Item
// an importer turns each thing of its source into (a row, or the reason it cannot
// be one), the docstring line that marks a row as made by one source, and the
// mapping of a foreign name onto a row key.
//
// The importers themselves (api/importer/openapi, api/importer/d1) only turn
// input into rows and per-item reports; writing them is the directory's
// (command.Directory.ImportItems, which POST /api/directory/import calls).
package importer

import (
	"strings"
	"unicode"

	"github.com/capdir/capdir/contract"
)

// Item is one thing of an imported source (an operation of an OpenAPI spec): the
// row it becomes, or why it cannot be one.
type Item struct {
	// Source names the thing in its source, e.g. "GET /pets/{petId}".
	Source string `json:"source"`
	// Key is the row's key; it may be set on a refused item when it was known.
	Key string `json:"key,omitempty"`
	// Row is the row, holding only the columns the importer owns (key, type,
	// runner, target, auth, content, category, input_schema, examples); nil when
	// Refused.
	Row *contract.Row `json:"-"`
	// Refused says why the thing cannot be a row; empty when Row is set.
	Refused string `json:"refused,omitempty"`
	// Notes say what of the thing the row leaves out (an optional header
	// parameter, a second security scheme).
	Notes []string `json:"notes,omitempty"`
}

// sourceTag starts the docstring line that marks an imported row.
const sourceTag = "# SOURCE: "

// SourceLine is the docstring line that marks a row as made by an import of
// source (for example `openapi spec="Swagger Petstore" prefix=""`) from its thing
// item ("GET /pets"). An import prunes only rows whose line names its source.
func SourceLine(source, item string) string {
	return sourceTag + source + " op=" + item
}

// SourceOf returns the source a row's content names in its SOURCE line, and
// whether it has one.
func SourceOf(content string) (string, bool) {
	for _, line := range strings.Split(content, "\n") {
		rest, ok := strings.CutPrefix(strings.TrimSpace(line), sourceTag)
		if !ok {
			continue
		}
		if i := strings.LastIndex(rest, " op="); i >= 0 {
			return rest[:i], true
		}
	}
	return "", false
}

// Key maps a foreign name onto a row key: camelCase and digit boundaries become
// '_', every character outside A-Z, 0-9, '_' and '-' becomes '_', runs of '_'
// collapse, and the result is upper-cased behind prefix (upper-cased too):
// "showPetById" is SHOW_PET_BY_ID, "list-pets v2" LIST-PETS_V2. The result may
// still be too long for a key; contract.ValidateKey says so.
func Key(prefix, name string) string {
	var b strings.Builder
	rs := []rune(name)
	for i, r := range rs {
		if i > 0 && boundary(rs[i-1], r, next(rs, i)) {
			b.WriteByte('_')
		}
		switch {
		case r < unicode.MaxASCII && (unicode.IsLetter(r) || unicode.IsDigit(r) || r == '-' || r == '_'):
			b.WriteRune(unicode.ToUpper(r))
		default:
			b.WriteByte('_')
		}
	}
	key := collapse(b.String())
	return collapse(strings.ToUpper(prefix) + key)
}

func next(rs []rune, i int) rune {
	if i+1 < len(rs) {
		return rs[i+1]
	}
	return 0
}

// boundary: a lower-case letter or digit before an upper-case one (petId), or the
// last capital of an acronym before a lower-case letter (HTTPServer).
func boundary(prev, r, after rune) bool {
	if !unicode.IsUpper(r) || r >= unicode.MaxASCII {
		return false
	}
	return unicode.IsLower(prev) || unicode.IsDigit(prev) || (unicode.IsUpper(prev) && unicode.IsLower(after))
}

// collapse folds runs of '_' into one and trims them from both ends.
func collapse(s string) string {
	for strings.Contains(s, "__") {
		s = strings.ReplaceAll(s, "__", "_")
	}
	return strings.Trim(s, "_")
}
