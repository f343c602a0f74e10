package flowrunner

import (
	"strconv"
	"strings"

	"github.com/capdir/capdir/contract"
	"github.com/capdir/capdir/eventlog/wire"
)

// prevName is the variable that holds the previous step's output; it cannot be
// bound.
const prevName = "PREV"

// Parse reads a flow row's content into its Plan. It is pure: it invokes nothing
// and reads nothing but content. Lines starting with # are documentation and are
// removed first (contract.StripDocs). The grammar is in the package documentation;
// a failure is a *failure.Error whose text is the ERR:flow:... literal and which
// matches one of this package's sentinels with errors.Is. Parse applies no bound
// on steps or branches; the runner does (Config.MaxSteps, Config.MaxFanout).
func Parse(content string) (*Plan, error) { return parse(content, bounds{}) }

// bounds limits what parse builds; 0 means no limit.
type bounds struct{ steps, fanout int }

// parse is Parse held to b: past a bound it stops with its literal, before it
// builds the steps or branches beyond it.
func parse(content string, b bounds) (*Plan, error) {
	src := contract.StripDocs(content)
	if src == "" {
		return nil, errEmpty()
	}
	pieces, n, err := splitSteps(src, b.steps)
	if err != nil {
		return nil, err
	}
	if b.steps > 0 && n > b.steps {
		return nil, errTooManySteps(n, b.steps)
	}
	p := &Plan{Steps: make([]Step, 0, len(pieces))}
	for i, piece := range pieces {
		s, err := parseStep(strings.TrimSpace(piece), i+1, b)
		if err != nil {
			return nil, err
		}
		p.Steps = append(p.Steps, s)
	}
	if err := checkBindings(p); err != nil {
		return nil, err
	}
	return p, nil
}

// splitSteps cuts src at each top-level ">": outside braces and not the ">" of a
// "=>". It refuses unbalanced braces, quoting the step they occur in. It returns
// at most limit pieces when limit > 0, and n, how many there are.
func splitSteps(src string, limit int) (pieces []string, n int, err error) {
	depth, start := 0, 0
	for i := 0; i < len(src); i++ {
		switch src[i] {
		case '{':
			depth++
		case '}':
			if depth == 0 {
				return nil, 0, errUnbalanced(strings.TrimSpace(src[start : i+1]))
			}
			depth--
		case '>':
			if depth == 0 && (i == 0 || src[i-1] != '=') {
				if n++; limit <= 0 || n <= limit {
					pieces = append(pieces, src[start:i])
				}
				start = i + 1
			}
		}
	}
	if depth != 0 {
		return nil, 0, errUnbalanced(strings.TrimSpace(src[start:]))
	}
	if n++; limit <= 0 || n <= limit {
		pieces = append(pieces, src[start:])
	}
	return pieces, n, nil
}

// splitTop cuts s at each sep outside braces; s has balanced braces. It returns
// at most limit pieces when limit > 0, and n, how many there are.
func splitTop(s string, sep byte, limit int) (pieces []string, n int) {
	depth, start := 0, 0
	for i := 0; i <= len(s); i++ {
		switch {
		case i == len(s) || (s[i] == sep && depth == 0):
			if n++; limit <= 0 || n <= limit {
				pieces = append(pieces, s[start:i])
			}
			start = i + 1
		case s[i] == '{':
			depth++
		case s[i] == '}':
			depth--
		}
	}
	return pieces, n
}

// cutBinding splits text at its first "=>" outside braces into what comes before
// and the binding name after it, both trimmed; found is false when there is none.
func cutBinding(text string) (before, name string, found bool) {
	depth := 0
	for i := 0; i+1 < len(text); i++ {
		switch text[i] {
		case '{':
			depth++
		case '}':
			depth--
		case '=':
			if depth == 0 && text[i+1] == '>' {
				return strings.TrimSpace(text[:i]), strings.TrimSpace(text[i+2:]), true
			}
		}
	}
	return text, "", false
}

// parseStep reads the n-th step from its trimmed text.
func parseStep(text string, n int, b bounds) (Step, error) {
	if text == "" {
		return Step{}, errEmptyStep(n)
	}
	s := Step{Name: strconv.Itoa(n)}
	body, bind, found := cutBinding(text)
	var err error
	if strings.HasPrefix(body, "{") {
		s.Branches, err = parseFanout(text, body, s.Name, b.fanout)
	} else {
		s.Key, s.Body, err = parseCall(text, body)
	}
	if err != nil {
		return Step{}, err
	}
	if found {
		if s.Bind, err = checkName(bind); err != nil {
			return Step{}, err
		}
	}
	return s, nil
}

// parseCall reads "KEY: body" (text is the whole step or branch, for messages).
func parseCall(text, call string) (key, body string, err error) {
	k, b, ok := strings.Cut(call, ":")
	if !ok {
		return "", "", errBadStep(text)
	}
	key = strings.TrimSpace(k)
	if !wire.ValidKey(key) {
		return "", "", errBadKey(text)
	}
	return key, strings.TrimSpace(b), nil
}

// parseFanout reads "{ A: x | B: y => BY }" (body, trimmed, starting with "{") of
// the step named name, refusing more than limit branches when limit > 0.
func parseFanout(text, body, name string, limit int) ([]Branch, error) {
	end := closingBrace(body)
	if end != len(body)-1 {
		return nil, errBadFanout(text)
	}
	parts, n := splitTop(body[1:end], '|', limit)
	if limit > 0 && n > limit {
		return nil, errFanoutTooWide(n, limit)
	}
	branches := make([]Branch, 0, len(parts))
	seen := make(map[string]int, len(parts))
	for _, part := range parts {
		bt := strings.TrimSpace(part)
		if bt == "" {
			return nil, errEmptyBranch(text)
		}
		call, bind, found := cutBinding(bt)
		if strings.HasPrefix(call, "{") {
			return nil, errNestedFanout(bt)
		}
		key, b, err := parseCall(bt, call)
		if err != nil {
			return nil, err
		}
		br := Branch{Name: name + "." + key, Key: key, Body: b}
		if seen[key]++; seen[key] > 1 {
			br.Name += "." + strconv.Itoa(seen[key])
		}
		if found {
			if br.Bind, err = checkName(bind); err != nil {
				return nil, err
			}
		}
		branches = append(branches, br)
	}
	return branches, nil
}

// closingBrace returns the index of the "}" matching s[0] == '{', or -1.
func closingBrace(s string) int {
	depth := 0
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '{':
			depth++
		case '}':
			if depth--; depth == 0 {
				return i
			}
		}
	}
	return -1
}

// checkName accepts a binding name: [A-Z_][A-Z0-9_]*, the names Substitute
// resolves, other than PREV.
func checkName(name string) (string, error) {
	if name == "" || name == prevName || !isNameStart(name[0]) {
		return "", errBadBinding(name)
	}
	for i := 1; i < len(name); i++ {
		if !isNameStart(name[i]) && !('0' <= name[i] && name[i] <= '9') {
			return "", errBadBinding(name)
		}
	}
	return name, nil
}

func isNameStart(c byte) bool { return ('A' <= c && c <= 'Z') || c == '_' }

// checkBindings refuses a name bound twice in p.
func checkBindings(p *Plan) error {
	seen := map[string]bool{}
	bind := func(name string) error {
		if name == "" {
			return nil
		}
		if seen[name] {
			return errDuplicateBinding(name)
		}
		seen[name] = true
		return nil
	}
	for _, s := range p.Steps {
		for _, br := range s.Branches {
			if err := bind(br.Bind); err != nil {
				return err
			}
		}
		if err := bind(s.Bind); err != nil {
			return err
		}
	}
	return nil
}
