package projector

import (
	"encoding/json"
	"fmt"
	"sort"
	"sync"

	"github.com/capdir/capdir/eventlog"
	"github.com/capdir/capdir/eventlog/wire"
	bolt "go.etcd.io/bbolt"
)

// Upstream registrations. UPSTREAM_REGISTERED and UPSTREAM_REMOVED events, on one
// control-stream subject per upstream name, are folded into the upstreams bucket
// (name -> Upstream JSON), which the digest covers, so a replay gives back the
// same registrations. The fold checks structure only: decodable, a name that is
// one subject token and its subject's, a URL present. Whether a URL or a
// credential is usable is the door's rule (the facade's PUT) and the runner's at
// call time. Readers ask memory (Upstream, Upstreams): a set loaded when the
// projection opens and updated after every commit that changes it.

// Upstream is one registered upstream MCP server, as folded.
type Upstream struct {
	wire.UpstreamRegistered
	// Seq is the control-stream sequence of the registration.
	Seq uint64 `json:"seq"`
}

func (f *folder) upstreamRegistered(s *eventlog.Stored, subj wire.Subject) error {
	var r wire.UpstreamRegistered
	if err := decodeData(s, &r); err != nil {
		return err
	}
	if err := checkUpstreamName(r.Name, subj.Key); err != nil {
		return err
	}
	if r.URL == "" {
		return skipf(reasonBadData, "upstream registration of %s without a URL", r.Name)
	}
	u := Upstream{UpstreamRegistered: r, Seq: s.Seq}
	b, err := json.Marshal(&u)
	if err != nil {
		return err
	}
	if err := put(f.tx, bucketUpstreams, []byte(r.Name), b); err != nil {
		return err
	}
	f.fx.upstreams = append(f.fx.upstreams, upstreamChange{name: r.Name, up: &u})
	return nil
}

func (f *folder) upstreamRemoved(s *eventlog.Stored, subj wire.Subject) error {
	var r wire.UpstreamRemoved
	if err := decodeData(s, &r); err != nil {
		return err
	}
	if err := checkUpstreamName(r.Name, subj.Key); err != nil {
		return err
	}
	if err := f.tx.Bucket(bucketUpstreams).Delete([]byte(r.Name)); err != nil {
		return err
	}
	f.fx.upstreams = append(f.fx.upstreams, upstreamChange{name: r.Name})
	return nil
}

func checkUpstreamName(name, key string) error {
	if !wire.ValidUpstreamName(name) {
		return skipf(reasonBadData, "upstream registration: bad name %q", clip(name))
	}
	return sameKey("name", name, key)
}

// upstreamChange is a committed registration (up) or removal (up nil).
type upstreamChange struct {
	name string
	up   *Upstream
}

// Upstream is the registered upstream name, from memory; ok is false when none
// is registered. A caller that must see a registration appended through another
// node waits for the control stream first (WaitFor).
func (p *Projector) Upstream(name string) (Upstream, bool) { return p.upstreams.get(name) }

// Upstreams are the registered upstreams, sorted by name.
func (p *Projector) Upstreams() []Upstream { return p.upstreams.list() }

// WatchUpstreams calls fn with an upstream's name after every committed change
// of its registration (registered, replaced or removed), on the goroutine that
// folds the control stream, before readers waiting for the change are woken. fn
// must not block.
func (p *Projector) WatchUpstreams(fn func(name string)) {
	p.hooksMu.Lock()
	defer p.hooksMu.Unlock()
	p.upstreamWatchers = append(p.upstreamWatchers, fn)
}

// upstreamSet is the in-memory copy of the upstreams bucket.
type upstreamSet struct {
	mu sync.RWMutex
	m  map[string]Upstream
}

func newUpstreamSet() *upstreamSet { return &upstreamSet{m: map[string]Upstream{}} }

func (u *upstreamSet) get(name string) (Upstream, bool) {
	u.mu.RLock()
	defer u.mu.RUnlock()
	up, ok := u.m[name]
	return up, ok
}

func (u *upstreamSet) list() []Upstream {
	u.mu.RLock()
	out := make([]Upstream, 0, len(u.m))
	for _, up := range u.m {
		out = append(out, up)
	}
	u.mu.RUnlock()
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

func (u *upstreamSet) load(tx *bolt.Tx) error {
	u.mu.Lock()
	defer u.mu.Unlock()
	return each(tx, bucketUpstreams, func(k, v []byte) error {
		var up Upstream
		if err := json.Unmarshal(v, &up); err != nil {
			return fmt.Errorf("upstream %s: %w", k, err)
		}
		u.m[string(k)] = up
		return nil
	})
}

func (u *upstreamSet) apply(changes []upstreamChange) {
	if len(changes) == 0 {
		return
	}
	u.mu.Lock()
	defer u.mu.Unlock()
	for _, c := range changes {
		if c.up == nil {
			delete(u.m, c.name)
		} else {
			u.m[c.name] = *c.up
		}
	}
}
