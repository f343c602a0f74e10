package console

import (
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/capdir/capdir/command"
	"github.com/capdir/capdir/contract"
	"github.com/capdir/capdir/dispatcher/gate/token"
	"github.com/capdir/capdir/projector"
)

func (c *Console) registerTokens() {
	c.mux.HandleFunc("GET /console/tokens", c.page(c.tokensPage))
	c.mux.HandleFunc("POST /console/tokens", c.change(c.mint))
	c.mux.HandleFunc("POST /console/tokens/revoke", c.change(c.revoke))
}

type tokensData struct {
	Keys, Categories []string
	// Minted is the token just minted, shown this once.
	Minted *command.MintAnswer
}

// scopeChoices are the rows' keys and categories, for the scope picker.
func (c *Console) scopeChoices() (keys, cats []string, err error) {
	err = c.cfg.Projector.Each(projector.Filter{}, func(r *contract.Row) error {
		keys = append(keys, r.Key)
		if r.Category != "" && !slices.Contains(cats, r.Category) {
			cats = append(cats, r.Category)
		}
		return nil
	})
	slices.Sort(cats)
	return keys, cats, err
}

func (c *Console) tokensPage(w http.ResponseWriter, r *http.Request, ss *session) error {
	return c.renderTokens(w, ss, nil)
}

func (c *Console) renderTokens(w http.ResponseWriter, ss *session, minted *command.MintAnswer) error {
	keys, cats, err := c.scopeChoices()
	if err != nil {
		return unavailable(err)
	}
	c.render(w, "tokens", http.StatusOK, view{Title: "Tokens", Nav: "tokens", CSRF: ss.csrf, Notice: ss.notice,
		Data: tokensData{Keys: keys, Categories: cats, Minted: minted}})
	return nil
}

// mint mints a token through POST /api/tokens's path and shows it once: the
// answer is not stored, and the page is not cached.
func (c *Console) mint(w http.ResponseWriter, r *http.Request, ss *session) error {
	f := r.PostForm
	in := command.MintRequest{Sub: strings.TrimSpace(f.Get("sub")), Risk: f.Get("risk"), Pin: f.Get("pin"),
		Scope: token.Scope{Keys: f["keys"], Categories: f["categories"]}}
	if in.Pin == "fingerprint" {
		in.Pin = strings.TrimSpace(f.Get("pin_fingerprint"))
	}
	if v := strings.TrimSpace(f.Get("ttl_seconds")); v != "" {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return badQuery("ttl_seconds must be a whole number of seconds")
		}
		in.TTLSeconds = n
	}
	ans, err := c.cmd.Tokens().Mint(in)
	if err != nil {
		return err
	}
	return c.renderTokens(w, ss, &ans)
}

// revoke revokes a token by its jti through DELETE /api/tokens/{jti}'s path.
func (c *Console) revoke(w http.ResponseWriter, r *http.Request, ss *session) error {
	jti := strings.TrimSpace(r.PostFormValue("jti"))
	if err := c.cmd.Tokens().Revoke(r.Context(), jti); err != nil {
		return err
	}
	c.done(w, r, ss, "/console/tokens", "Revoked token "+jti+": no call runs with it from now on.")
	return nil
}
