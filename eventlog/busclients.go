package eventlog

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/capdir/capdir/eventlog/wire"
	"github.com/nats-io/nkeys"
)

// Roles a bus identity may have (BusClient.Role).
const (
	// RoleClient invokes rows: it publishes requests on its own request subject and
	// reads its own receipt notices, in an account of its own. Nothing else.
	RoleClient = "client"
	// RoleService serves rows of the nats runner: it receives the requests capdir
	// sends on the subjects it was granted (BusClient.Serve) and answers them.
	// Nothing else.
	RoleService = "service"
	// RoleNode is another capdir node sharing this node's log over TCP: it is capdir
	// itself, with every permission.
	RoleNode = "node"
)

// BusClient is one identity admitted to the embedded NATS server when it listens
// on TCP, as recorded in the data dir (see AddBusClient). The record holds the
// public key only; the seed is the client's.
type BusClient struct {
	Name      string    `json:"name"`
	PublicKey string    `json:"public_key"` // an nkey user public key (U...)
	Role      string    `json:"role"`
	Serve     []string  `json:"serve,omitempty"` // RoleService: the subjects it serves
	CreatedAt time.Time `json:"created_at"`
}

// BusDir is where a data dir keeps its bus identities: NAME.json (the record) and,
// until the operator hands it over, NAME.nk (the seed).
func BusDir(dataDir string) string { return filepath.Join(dataDir, "bus") }

// BusSeedPath is where AddBusClient writes an identity's nkey seed.
func BusSeedPath(dataDir, name string) string { return filepath.Join(BusDir(dataDir), name+".nk") }

func busRecordPath(dataDir, name string) string {
	return filepath.Join(BusDir(dataDir), name+".json")
}

// Validate reports every problem with the record at once.
func (c *BusClient) Validate() error {
	var errs []error
	if err := wire.CheckClientName(c.Name); err != nil {
		errs = append(errs, err)
	}
	if !nkeys.IsValidPublicUserKey(c.PublicKey) {
		errs = append(errs, fmt.Errorf("%w: public_key %q is not an nkey user public key (U...)", ErrBusClient, c.PublicKey))
	}
	switch c.Role {
	case RoleClient, RoleNode:
		if len(c.Serve) > 0 {
			errs = append(errs, fmt.Errorf("%w: only a %s serves subjects; a %s does not (--serve)", ErrBusClient, RoleService, c.Role))
		}
	case RoleService:
		if len(c.Serve) == 0 {
			errs = append(errs, fmt.Errorf("%w: a %s needs at least one subject to serve (--serve SUBJECT)", ErrBusClient, RoleService))
		}
		for _, s := range c.Serve {
			if err := CheckServeSubject(s); err != nil {
				errs = append(errs, err)
			}
		}
	default:
		errs = append(errs, fmt.Errorf("%w: role %q must be %s, %s or %s", ErrBusClient, c.Role, RoleClient, RoleService, RoleNode))
	}
	return errors.Join(errs...)
}

// CheckServeSubject reports why a service may not be granted subject: it must be a
// valid NATS subject (wildcards allowed, but not as its first token) outside the
// reserved ones (wire.ReservedSubject: NATS's and JetStream's API, _INBOX, capdir's
// own log and notices), so a service sees what capdir sends to rows' targets and
// nothing else.
func CheckServeSubject(subject string) error {
	bad := func(why string) error {
		return fmt.Errorf("%w: --serve %q %s", ErrBusClient, subject, why)
	}
	if subject == "" || strings.ContainsFunc(subject, func(r rune) bool { return r <= ' ' || r == 0x7f }) {
		return bad("must be a NATS subject without whitespace")
	}
	tokens := strings.Split(subject, ".")
	for i, tok := range tokens {
		switch {
		case tok == "":
			return bad("has an empty token (a leading, trailing or doubled '.')")
		case strings.ContainsAny(tok, "*>") && tok != "*" && tok != ">":
			return bad("uses a wildcard inside a token: '*' and '>' stand alone")
		case tok == ">" && i != len(tokens)-1:
			return bad("uses '>' before the last token")
		case (tok == "*" || tok == ">") && i == 0:
			return bad("starts with a wildcard, which would match capdir's own subjects")
		}
	}
	if wire.ReservedSubject(subject) {
		return bad("is reserved: '$' subjects are NATS's and JetStream's API, _INBOX carries other callers' replies and capdir. is capdir's log")
	}
	return nil
}

// AddBusClient creates a bus identity: an nkey user key pair whose seed is written
// to BusSeedPath (mode 0600, in a directory of mode 0700) and whose record (name,
// public key, role, subjects) is written next to it. The embedded server admits it
// from its next start. c.Name, c.Role and, for a service, c.Serve are required; the
// key and the creation time are filled in. An existing name is refused.
func AddBusClient(dataDir string, c BusClient, now time.Time) (BusClient, string, error) {
	kp, err := nkeys.CreateUser()
	if err != nil {
		return c, "", fmt.Errorf("eventlog: bus client key: %w", err)
	}
	if c.PublicKey, err = kp.PublicKey(); err != nil {
		return c, "", fmt.Errorf("eventlog: bus client key: %w", err)
	}
	c.CreatedAt = now.UTC().Truncate(time.Second)
	if err := c.Validate(); err != nil {
		return c, "", err
	}
	seed, err := kp.Seed()
	if err != nil {
		return c, "", fmt.Errorf("eventlog: bus client key: %w", err)
	}
	if err := os.MkdirAll(BusDir(dataDir), 0o700); err != nil {
		return c, "", fmt.Errorf("eventlog: %w", err)
	}
	if _, err := os.Stat(busRecordPath(dataDir, c.Name)); err == nil {
		return c, "", fmt.Errorf("%w: %s already exists (remove it first with capdir bus remove %s)", ErrBusClientExists, c.Name, c.Name)
	}
	// O_EXCL on the seed is what makes two concurrent adds of one name fail but one.
	path := BusSeedPath(dataDir, c.Name)
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if errors.Is(err, fs.ErrExist) {
		return c, "", fmt.Errorf("%w: %s already has a seed file %s (remove it first with capdir bus remove %s)", ErrBusClientExists, c.Name, path, c.Name)
	}
	if err != nil {
		return c, "", fmt.Errorf("eventlog: %w", err)
	}
	_, werr := f.Write(append(seed, '\n'))
	if err := errors.Join(werr, f.Close()); err != nil {
		os.Remove(path)
		return c, "", fmt.Errorf("eventlog: write %s: %w", path, err)
	}
	if err := writeRecord(busRecordPath(dataDir, c.Name), &c); err != nil {
		os.Remove(path)
		return c, "", err
	}
	return c, path, nil
}

// writeRecord writes the record through a temporary file and a rename, so a reader
// sees the whole record or none.
func writeRecord(path string, c *BusClient) error {
	b, err := json.MarshalIndent(c, "", "  ")
	if err != nil {
		return err
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, append(b, '\n'), 0o600); err != nil {
		return fmt.Errorf("eventlog: write %s: %w", tmp, err)
	}
	if err := os.Rename(tmp, path); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("eventlog: %w", err)
	}
	return nil
}

// BusClients reads the bus identities recorded in the data dir, sorted by name. A
// record that does not parse or validate, or whose file name is not its name, is an
// error that names the file: the server does not start with an identity it cannot
// read, rather than silently leaving it out.
func BusClients(dataDir string) ([]BusClient, error) {
	paths, err := filepath.Glob(filepath.Join(BusDir(dataDir), "*.json"))
	if err != nil {
		return nil, fmt.Errorf("eventlog: %w", err)
	}
	var out []BusClient
	for _, p := range paths {
		c, err := readRecord(p)
		if err != nil {
			return nil, err
		}
		out = append(out, c)
	}
	slices.SortFunc(out, func(a, b BusClient) int { return strings.Compare(a.Name, b.Name) })
	return out, nil
}

func readRecord(path string) (BusClient, error) {
	var c BusClient
	b, err := os.ReadFile(path)
	if err != nil {
		return c, fmt.Errorf("eventlog: %w", err)
	}
	fix := fmt.Sprintf("fix it, or remove it with capdir bus remove %s", strings.TrimSuffix(filepath.Base(path), ".json"))
	if err := json.Unmarshal(b, &c); err != nil {
		return c, fmt.Errorf("%w: %s: %v; %s", ErrBusClient, path, err, fix)
	}
	if err := c.Validate(); err != nil {
		return c, fmt.Errorf("%s: %w; %s", path, err, fix)
	}
	if filepath.Base(path) != c.Name+".json" {
		return c, fmt.Errorf("%w: %s records the name %q: a record's file is NAME.json; %s", ErrBusClient, path, c.Name, fix)
	}
	return c, nil
}

// RemoveBusClient deletes a bus identity's record and, if it is still there, its
// seed. The embedded server refuses it from its next start.
func RemoveBusClient(dataDir, name string) error {
	if err := wire.CheckClientName(name); err != nil {
		return err
	}
	rerr := os.Remove(busRecordPath(dataDir, name))
	serr := os.Remove(BusSeedPath(dataDir, name))
	if errors.Is(rerr, fs.ErrNotExist) && errors.Is(serr, fs.ErrNotExist) {
		return fmt.Errorf("%w: %s (capdir bus list shows the names)", ErrNoBusClient, name)
	}
	for _, err := range []error{rerr, serr} {
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("eventlog: %w", err)
		}
	}
	return nil
}
