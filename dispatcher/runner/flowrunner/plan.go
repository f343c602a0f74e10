package flowrunner

import "strings"

// Plan is a parsed flow: its steps in order. Parse builds it; Plan.String prints
// it back in canonical form, which Parse reads to an equal Plan.
type Plan struct {
	Steps []Step
}

// Step is one step of a flow: either a single invocation (Key and Body) or a
// fan-out (Branches, run concurrently; Key and Body empty).
type Step struct {
	// Name is the step's position, "1", "2", ...: the name the invocation is made
	// under (runner.Invoker.Invoke), stable for a given content.
	Name string
	// Key is the row the step invokes; empty for a fan-out.
	Key string
	// Body is the invocation body template, before substitution.
	Body string
	// Branches are a fan-out's branches, in written order; nil for a single step.
	Branches []Branch
	// Bind is the name the step's output is bound to ($Bind in later steps); ""
	// for none. A fan-out's output is its branches' outputs joined with "|".
	Bind string
}

// Branch is one branch of a fan-out.
type Branch struct {
	// Name is "<step>.<KEY>" ("3.A"); a key repeated within one fan-out is
	// "<step>.<KEY>.<n>" from its second occurrence on ("3.A.2").
	Name string
	Key  string
	Body string
	// Bind is the name the branch's output is bound to; "" for none.
	Bind string
}

// Fanout reports whether s is a fan-out.
func (s Step) Fanout() bool { return s.Branches != nil }

// Invocations is how many invocations the plan makes when every step runs.
func (p *Plan) Invocations() int {
	n := 0
	for _, s := range p.Steps {
		if s.Fanout() {
			n += len(s.Branches)
		} else {
			n++
		}
	}
	return n
}

// String prints the plan in canonical form: one step per line, each after the
// first starting with "> "; a fan-out on one line as "{ A: x | B: y }"; bindings
// as " => NAME".
func (p *Plan) String() string {
	var b strings.Builder
	for i, s := range p.Steps {
		if i > 0 {
			b.WriteString("\n> ")
		}
		b.WriteString(s.String())
	}
	return b.String()
}

// String prints one step in canonical form.
func (s Step) String() string {
	var b strings.Builder
	if s.Fanout() {
		b.WriteString("{ ")
		for i, br := range s.Branches {
			if i > 0 {
				b.WriteString(" | ")
			}
			writeCall(&b, br.Key, br.Body, br.Bind)
		}
		b.WriteString(" }")
		writeBind(&b, s.Bind)
		return b.String()
	}
	writeCall(&b, s.Key, s.Body, s.Bind)
	return b.String()
}

func writeCall(b *strings.Builder, key, body, bind string) {
	b.WriteString(key)
	b.WriteByte(':')
	if body != "" {
		b.WriteByte(' ')
		b.WriteString(body)
	}
	writeBind(b, bind)
}

func writeBind(b *strings.Builder, bind string) {
	if bind != "" {
		b.WriteString(" => ")
		b.WriteString(bind)
	}
}
