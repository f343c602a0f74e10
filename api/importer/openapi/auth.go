package openapi

import (
	"fmt"
	"sort"
	"strings"

	"github.com/getkin/kin-openapi/openapi3"
)

// auth maps the operation's security requirements onto the row's credential
// forms. The first requirement that one credential can satisfy wins: an empty
// one (security optional) is no credential; one naming a single scheme is that
// scheme's form with the operator's environment variable. A requirement of
// several schemes at once, or a scheme no form carries (mutualTLS, digest), is
// passed over; when none is left the operation is refused.
func (c *converter) auth() string {
	reqs := c.doc.Security
	if c.op.op.Security != nil {
		reqs = *c.op.op.Security
	}
	if len(reqs) == 0 {
		return ""
	}
	var reasons []string
	for _, req := range reqs {
		switch len(req) {
		case 0:
			return ""
		case 1:
		default:
			reasons = append(reasons, fmt.Sprintf("%v needs several credentials at once", schemeNames(req)))
			continue
		}
		name := schemeNames(req)[0]
		form, env, why := c.form(name)
		if why == "" {
			c.env = env
			if len(reqs) > 1 {
				c.notes = append(c.notes, fmt.Sprintf("of its %d security requirements, the row uses %q", len(reqs), name))
			}
			return form
		}
		reasons = append(reasons, why)
	}
	if len(reasons) == 1 {
		c.fail(reasons[0])
	}
	c.fail(refuseSecurity(reasons))
	return ""
}

// form is the credential of the scheme called name and the environment variable
// it names, or why there is none.
func (c *converter) form(name string) (string, string, string) {
	var ref *openapi3.SecuritySchemeRef
	if c.doc.Components != nil {
		ref = c.doc.Components.SecuritySchemes[name]
	}
	if ref == nil || ref.Value == nil {
		return "", "", fmt.Sprintf("security scheme %q is not defined under components.securitySchemes", name)
	}
	s := ref.Value
	kind := s.Type
	if s.Type == "http" || s.Type == "apiKey" {
		kind = strings.TrimSpace(s.Type + " " + strings.ToLower(s.Scheme) + s.In)
	}
	env, ok := c.opt.AuthEnv[name]
	if !ok {
		env, ok = c.opt.AuthEnv[""]
	}
	supported := true
	var form string
	switch {
	case s.Type == "http" && strings.EqualFold(s.Scheme, "bearer"):
		form = "bearer:" + env
	case s.Type == "http" && strings.EqualFold(s.Scheme, "basic"):
		form = "basic:" + env
	case s.Type == "apiKey" && s.In == "header":
		form = "headers:" + mustJSON(map[string]string{s.Name: "$" + env})
	case s.Type == "apiKey" && s.In == "query":
		form = "query:" + s.Name + "=" + env
	case s.Type == "apiKey" && s.In == "cookie":
		form = "headers:" + mustJSON(map[string]string{"Cookie": s.Name + "=$" + env})
	case s.Type == "oauth2" || s.Type == "openIdConnect":
		form = "oauth:" + env
	default:
		supported = false
	}
	switch {
	case !supported:
		return "", "", fmt.Sprintf("security scheme %q (%s) has no row credential form (bearer, basic, headers, query, oauth)", name, kind)
	case strings.ContainsAny(s.Name, "=&\"\\\r\n") && s.Type == "apiKey":
		return "", "", fmt.Sprintf("security scheme %q names its key %q, which a row credential cannot carry", name, s.Name)
	case !ok:
		return "", "", refuseNoCredential(name, kind)
	}
	return form, env, ""
}

func schemeNames(req openapi3.SecurityRequirement) []string {
	names := make([]string, 0, len(req))
	for n := range req {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}
