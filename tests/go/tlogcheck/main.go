// Command tlogcheck verifies a Beacon's transparency log with Go's own implementations:
// golang.org/x/mod/sumdb/note for the signed checkpoint (c2sp.org/signed-note,
// c2sp.org/tlog-checkpoint) and golang.org/x/mod/sumdb/tlog for the tiles (c2sp.org/tlog-tiles)
// and the RFC 6962 proofs. Nothing of the Beacon's TypeScript is used.
//
// It reads one JSON document on stdin:
//
//	{"prefix": "http://127.0.0.1:PORT/beacon/0.1/log",
//	 "verifierKey": "<name>+<hash8hex>+<base64(0x01 || ed25519 public key)>",
//	 "inclusion": [{"index": 3, "treeSize": 10, "leafHash": "<hex>", "proof": ["<hex>", ...]}],
//	 "consistency": [{"first": 3, "firstRoot": "<hex>", "second": 10, "proof": ["<hex>", ...]}]}
//
// and prints one line per check. Exit status: 0 when everything verifies, 1 after a
// "FAIL: ..." line, 2 on a usage error (bad arguments or input). With -v it also lists every
// tile it fetched, on stderr.
//
// Build without network access:
//
//	GO111MODULE=off GOPATH=/usr/share/gocode go build -o tlogcheck ./tests/go/tlogcheck
package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"time"

	"golang.org/x/mod/sumdb/note"
	"golang.org/x/mod/sumdb/tlog"
)

// tileHeight is the only tile height c2sp.org/tlog-tiles defines (256 hashes a tile).
const tileHeight = 8

// Limits on what is read; a checkpoint is a few hundred bytes, a tile at most 8 KiB.
const (
	maxInput      = 64 << 20
	maxCheckpoint = 1 << 20
	requestTime   = 60 * time.Second
)

type inclusionItem struct {
	Index    *int64   `json:"index"`
	TreeSize *int64   `json:"treeSize"`
	LeafHash string   `json:"leafHash"`
	Proof    []string `json:"proof"`

	leaf  tlog.Hash
	proof []tlog.Hash
}

type consistencyItem struct {
	First     *int64   `json:"first"`
	FirstRoot string   `json:"firstRoot"`
	Second    *int64   `json:"second"`
	Proof     []string `json:"proof"`

	firstRoot tlog.Hash
	proof     []tlog.Hash
}

type input struct {
	Prefix      string            `json:"prefix"`
	VerifierKey string            `json:"verifierKey"`
	Inclusion   []inclusionItem   `json:"inclusion"`
	Consistency []consistencyItem `json:"consistency"`
}

// usageError ends the program with status 2.
type usageError struct{ msg string }

func (e usageError) Error() string { return e.msg }

func usagef(format string, args ...interface{}) error {
	return usageError{fmt.Sprintf(format, args...)}
}

// failure ends the program with status 1 and a FAIL line.
type failure struct{ msg string }

func (e failure) Error() string { return e.msg }

func failf(format string, args ...interface{}) error {
	return failure{fmt.Sprintf(format, args...)}
}

func main() {
	verbose := false
	for _, arg := range os.Args[1:] {
		if arg == "-v" && !verbose {
			verbose = true
			continue
		}
		fmt.Fprintln(os.Stderr, "usage: tlogcheck [-v] < input.json")
		os.Exit(2)
	}
	err := run(os.Stdin, os.Stdout, os.Stderr, verbose)
	var usage usageError
	switch {
	case err == nil:
		os.Exit(0)
	case errors.As(err, &usage):
		fmt.Fprintln(os.Stderr, "usage error: "+usage.msg)
		fmt.Fprintln(os.Stderr, "usage: tlogcheck [-v] < input.json")
		os.Exit(2)
	default:
		fmt.Fprintln(os.Stdout, "FAIL: "+err.Error())
		os.Exit(1)
	}
}

// readInput decodes and validates the JSON document on stdin.
func readInput(r io.Reader) (*input, *url.URL, error) {
	data, err := io.ReadAll(io.LimitReader(r, maxInput+1))
	if err != nil {
		return nil, nil, usagef("reading stdin: %v", err)
	}
	if len(data) > maxInput {
		return nil, nil, usagef("input larger than %d bytes", maxInput)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var in input
	if err := dec.Decode(&in); err != nil {
		return nil, nil, usagef("input is not the expected JSON object: %v", err)
	}
	if dec.More() {
		return nil, nil, usagef("input holds more than one JSON value")
	}
	if in.Prefix == "" || in.VerifierKey == "" {
		return nil, nil, usagef(`"prefix" and "verifierKey" are required`)
	}
	prefix, err := loopbackPrefix(in.Prefix)
	if err != nil {
		return nil, nil, err
	}
	for i := range in.Inclusion {
		item := &in.Inclusion[i]
		if item.Index == nil || item.TreeSize == nil || item.LeafHash == "" || item.Proof == nil {
			return nil, nil, usagef(`inclusion[%d] needs "index", "treeSize", "leafHash" and "proof"`, i)
		}
		if item.leaf, err = parseHash(fmt.Sprintf("inclusion[%d].leafHash", i), item.LeafHash); err != nil {
			return nil, nil, err
		}
		if item.proof, err = parseHashes(fmt.Sprintf("inclusion[%d].proof", i), item.Proof); err != nil {
			return nil, nil, err
		}
	}
	for i := range in.Consistency {
		item := &in.Consistency[i]
		if item.First == nil || item.Second == nil || item.FirstRoot == "" || item.Proof == nil {
			return nil, nil, usagef(`consistency[%d] needs "first", "firstRoot", "second" and "proof"`, i)
		}
		if item.firstRoot, err = parseHash(fmt.Sprintf("consistency[%d].firstRoot", i), item.FirstRoot); err != nil {
			return nil, nil, err
		}
		if item.proof, err = parseHashes(fmt.Sprintf("consistency[%d].proof", i), item.Proof); err != nil {
			return nil, nil, err
		}
	}
	return &in, prefix, nil
}

// loopbackPrefix accepts only a plain http URL whose host is a loopback IP literal.
func loopbackPrefix(raw string) (*url.URL, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return nil, usagef("prefix %q is not a URL: %v", raw, err)
	}
	if u.Scheme != "http" || u.Opaque != "" || u.User != nil || u.RawQuery != "" ||
		u.ForceQuery || u.Fragment != "" {
		return nil, usagef("prefix %q must be a plain http:// URL without credentials, query or fragment", raw)
	}
	ip := net.ParseIP(u.Hostname())
	if ip == nil || !ip.IsLoopback() {
		return nil, usagef("prefix %q must name a loopback IP address (127.0.0.0/8 or ::1)", raw)
	}
	u.Path = strings.TrimRight(u.Path, "/")
	u.RawPath = ""
	return u, nil
}

// fetcher GETs resources under the prefix only: no proxy, no redirect, no other host.
type fetcher struct {
	prefix *url.URL
	client *http.Client
}

func newFetcher(prefix *url.URL) *fetcher {
	host := prefix.Host
	if prefix.Port() == "" {
		host = net.JoinHostPort(prefix.Hostname(), "80")
	}
	dialer := &net.Dialer{Timeout: requestTime}
	transport := &http.Transport{
		Proxy: nil,
		DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
			if addr != host {
				return nil, fmt.Errorf("refusing to connect to %s (only %s)", addr, host)
			}
			return dialer.DialContext(ctx, network, addr)
		},
		MaxIdleConnsPerHost: 4,
	}
	return &fetcher{
		prefix: prefix,
		client: &http.Client{
			Transport: transport,
			Timeout:   requestTime,
			CheckRedirect: func(req *http.Request, via []*http.Request) error {
				return http.ErrUseLastResponse
			},
		},
	}
}

// get fetches <prefix>/<rel> and checks status 200 and the media type; it reads at most max+1
// bytes and fails when there are more than max.
func (f *fetcher) get(rel, mediaType string, wantCharset string, max int) ([]byte, error) {
	target := f.prefix.String() + "/" + rel
	resp, err := f.client.Get(target)
	if err != nil {
		return nil, fmt.Errorf("GET %s: %v", target, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		where := ""
		if loc := resp.Header.Get("Location"); loc != "" {
			where = " (redirect to " + loc + " not followed)"
		}
		return nil, fmt.Errorf("GET %s: status %d, want 200%s", target, resp.StatusCode, where)
	}
	contentType := resp.Header.Get("Content-Type")
	mt, params, err := mime.ParseMediaType(contentType)
	if err != nil || mt != mediaType ||
		(wantCharset != "" && !strings.EqualFold(params["charset"], wantCharset)) {
		want := mediaType
		if wantCharset != "" {
			want += "; charset=" + wantCharset
		}
		return nil, fmt.Errorf("GET %s: Content-Type %q, want %q", target, contentType, want)
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, int64(max)+1))
	if err != nil {
		return nil, fmt.Errorf("GET %s: reading the body: %v", target, err)
	}
	if len(body) > max {
		return nil, fmt.Errorf("GET %s: body longer than %d bytes", target, max)
	}
	return body, nil
}

// c2spTilePath turns Go's "tile/8/L/NNN[.p/W]" into C2SP's "tile/L/NNN[.p/W]".
func c2spTilePath(t tlog.Tile) (string, error) {
	goPath := t.Path()
	const goPrefix = "tile/8/"
	if t.H != tileHeight || t.L < 0 || !strings.HasPrefix(goPath, goPrefix) {
		return "", fmt.Errorf("tile %s is not a height-8 hash tile", goPath)
	}
	return "tile/" + goPath[len(goPrefix):], nil
}

// tileReader implements tlog.TileReader over HTTP. Only tiles that tlog.TileHashReader has
// authenticated against the checkpoint (SaveTiles) are kept for later calls.
type tileReader struct {
	fetcher *fetcher
	size    int64
	saved   map[tlog.Tile][]byte
	fetched []string
	verbose io.Writer
}

func (r *tileReader) Height() int { return tileHeight }

func (r *tileReader) ReadTiles(tiles []tlog.Tile) ([][]byte, error) {
	data := make([][]byte, len(tiles))
	for i, t := range tiles {
		if saved, ok := r.saved[t]; ok {
			data[i] = saved
			continue
		}
		// Go asks for full tiles and, at each level, for the one partial tile of this tree
		// size: width floor(size / 256**L) mod 256 (c2sp.org/tlog-tiles, "Partial Tiles").
		if t.W != 1<<tileHeight && int64(t.W) != (r.size>>(uint(t.L)*tileHeight))%(1<<tileHeight) {
			return nil, fmt.Errorf("tlog asked for tile %s, not a tile of a tree of size %d", t.Path(), r.size)
		}
		rel, err := c2spTilePath(t)
		if err != nil {
			return nil, err
		}
		body, err := r.fetcher.get(rel, "application/octet-stream", "", t.W*tlog.HashSize)
		if err != nil {
			return nil, err
		}
		if len(body) != t.W*tlog.HashSize {
			return nil, fmt.Errorf("tile %s: %d bytes, want %d (%d hashes)", rel, len(body), t.W*tlog.HashSize, t.W)
		}
		r.fetched = append(r.fetched, rel)
		if r.verbose != nil {
			fmt.Fprintf(r.verbose, "fetched %s/%s (%d bytes)\n", r.fetcher.prefix, rel, len(body))
		}
		data[i] = body
	}
	return data, nil
}

func (r *tileReader) SaveTiles(tiles []tlog.Tile, data [][]byte) {
	for i, t := range tiles {
		r.saved[t] = data[i]
	}
}

// checkpoint is the parsed body of a c2sp.org/tlog-checkpoint note.
type checkpoint struct {
	origin     string
	size       int64
	root       tlog.Hash
	extensions []string
}

// parseCheckpoint parses the note text: origin, decimal size, base64 root hash, then
// optional non-empty extension lines; the text ends with a newline.
func parseCheckpoint(text string) (*checkpoint, error) {
	if !strings.HasSuffix(text, "\n") {
		return nil, errors.New("checkpoint text does not end with a newline")
	}
	lines := strings.Split(strings.TrimSuffix(text, "\n"), "\n")
	if len(lines) < 3 {
		return nil, fmt.Errorf("checkpoint text has %d lines, want at least 3", len(lines))
	}
	for i, line := range lines {
		if line == "" {
			return nil, fmt.Errorf("checkpoint line %d is empty", i+1)
		}
	}
	c := &checkpoint{origin: lines[0], extensions: lines[3:]}
	sizeLine := lines[1]
	if (len(sizeLine) > 1 && sizeLine[0] == '0') || strings.TrimLeft(sizeLine, "0123456789") != "" {
		return nil, fmt.Errorf("checkpoint size %q is not a decimal without leading zeroes", sizeLine)
	}
	size, err := strconv.ParseInt(sizeLine, 10, 64)
	if err != nil {
		return nil, fmt.Errorf("checkpoint size %q: %v", sizeLine, err)
	}
	c.size = size
	root, err := base64.StdEncoding.Strict().DecodeString(lines[2])
	if err != nil || len(root) != tlog.HashSize {
		return nil, fmt.Errorf("checkpoint root hash %q is not the standard base64 of 32 bytes", lines[2])
	}
	copy(c.root[:], root)
	return c, nil
}

// parseHash reads a 64-digit hex hash.
func parseHash(what, s string) (tlog.Hash, error) {
	var h tlog.Hash
	b, err := hex.DecodeString(s)
	if err != nil || len(b) != tlog.HashSize {
		return h, usagef("%s %q is not 64 hex digits", what, s)
	}
	copy(h[:], b)
	return h, nil
}

func parseHashes(what string, list []string) ([]tlog.Hash, error) {
	hashes := make([]tlog.Hash, len(list))
	for i, s := range list {
		h, err := parseHash(fmt.Sprintf("%s[%d]", what, i), s)
		if err != nil {
			return nil, err
		}
		hashes[i] = h
	}
	return hashes, nil
}

func hx(h tlog.Hash) string { return hex.EncodeToString(h[:]) }

// sameProof reports the first position where two proofs differ, or -1.
func sameProof(a, b []tlog.Hash) int {
	for i := 0; i < len(a) || i < len(b); i++ {
		if i >= len(a) || i >= len(b) || a[i] != b[i] {
			return i
		}
	}
	return -1
}

func run(stdin io.Reader, stdout, stderr io.Writer, verbose bool) error {
	in, prefix, err := readInput(stdin)
	if err != nil {
		return err
	}
	verifier, err := note.NewVerifier(in.VerifierKey)
	if err != nil {
		return usagef("verifierKey %q: %v", in.VerifierKey, err)
	}
	fetch := newFetcher(prefix)

	// The checkpoint: a signed note that must carry a valid signature by the given key.
	raw, err := fetch.get("checkpoint", "text/plain", "utf-8", maxCheckpoint)
	if err != nil {
		return failf("checkpoint: %v", err)
	}
	opened, err := note.Open(raw, note.VerifierList(verifier))
	if err != nil {
		var unverified *note.UnverifiedNoteError
		if errors.As(err, &unverified) {
			return failf("checkpoint: no signature by %s+%08x (signatures: %d unverified)",
				verifier.Name(), verifier.KeyHash(), len(unverified.Note.UnverifiedSigs))
		}
		return failf("checkpoint: %v", err)
	}
	cp, err := parseCheckpoint(opened.Text)
	if err != nil {
		return failf("checkpoint: %v", err)
	}
	if cp.origin != verifier.Name() {
		return failf("checkpoint: origin %q is not the verifier key's name %q", cp.origin, verifier.Name())
	}
	fmt.Fprintf(stdout, "checkpoint: signature verifies under %s, size %d\n", verifier.Name(), cp.size)
	if len(cp.extensions) > 0 {
		fmt.Fprintf(stdout, "checkpoint: %d extension line(s)\n", len(cp.extensions))
	}
	if len(opened.UnverifiedSigs) > 0 {
		fmt.Fprintf(stdout, "checkpoint: %d other signature(s) ignored\n", len(opened.UnverifiedSigs))
	}

	// The tiles: every tile the hash reader returns is authenticated against the root hash.
	reader := &tileReader{fetcher: fetch, size: cp.size, saved: make(map[tlog.Tile][]byte)}
	if verbose {
		reader.verbose = stderr
	}
	tree := tlog.Tree{N: cp.size, Hash: cp.root}
	hashes := tlog.TileHashReader(tree, reader)
	if cp.size == 0 {
		// tlog.TreeHash(0) is all zeroes; RFC 6962's empty tree hash is SHA-256 of nothing.
		if cp.root != tlog.Hash(sha256.Sum256(nil)) {
			return failf("checkpoint: size 0 but the root hash %s is not SHA-256 of the empty string", hx(cp.root))
		}
		fmt.Fprintln(stdout, "tiles: empty tree, root is SHA-256 of the empty string; no tiles to read")
	} else {
		th, err := tlog.TreeHash(cp.size, hashes)
		if err != nil {
			return failf("tiles: %v", err)
		}
		if th != cp.root {
			return failf("tiles: tree hash %s over %d leaves, checkpoint says %s", hx(th), cp.size, hx(cp.root))
		}
		fmt.Fprintf(stdout, "tiles: tree hash over %d leaves matches (%d tiles fetched)\n", cp.size, len(reader.fetched))

		// Every leaf hash, a tile's worth at a time: this reads every level-0 tile and every
		// tile above it, and tlog authenticates each against its parent up to the root.
		for lo := int64(0); lo < cp.size; lo += 1 << tileHeight {
			hi := lo + 1<<tileHeight
			if hi > cp.size {
				hi = cp.size
			}
			indexes := make([]int64, 0, hi-lo)
			for i := lo; i < hi; i++ {
				indexes = append(indexes, tlog.StoredHashIndex(0, i))
			}
			if _, err := hashes.ReadHashes(indexes); err != nil {
				return failf("tiles: reading leaf hashes %d to %d: %v", lo, hi-1, err)
			}
		}
		fmt.Fprintf(stdout, "tiles: all %d leaf hashes authenticated (%d tiles fetched in all)\n", cp.size, len(reader.fetched))
	}

	for _, item := range in.Inclusion {
		index, treeSize, leaf, proof := *item.Index, *item.TreeSize, item.leaf, item.proof
		if treeSize != cp.size {
			return failf("inclusion %d in %d: the checkpoint's size is %d; only proofs to the checkpoint's tree can be checked",
				index, treeSize, cp.size)
		}
		if index < 0 || index >= treeSize {
			return failf("inclusion %d in %d: index out of range", index, treeSize)
		}
		if err := tlog.CheckRecord(tlog.RecordProof(proof), treeSize, cp.root, index, leaf); err != nil {
			return failf("inclusion %d in %d: proof does not verify against the checkpoint: %v", index, treeSize, err)
		}
		stored, err := hashes.ReadHashes([]int64{tlog.StoredHashIndex(0, index)})
		if err != nil {
			return failf("inclusion %d in %d: reading the leaf hash from the tiles: %v", index, treeSize, err)
		}
		if stored[0] != leaf {
			return failf("inclusion %d in %d: the level-0 tile holds %s, not %s", index, treeSize, hx(stored[0]), hx(leaf))
		}
		fromTiles, err := tlog.ProveRecord(treeSize, index, hashes)
		if err != nil {
			return failf("inclusion %d in %d: proof from the tiles: %v", index, treeSize, err)
		}
		if at := sameProof(proof, fromTiles); at >= 0 {
			return failf("inclusion %d in %d: served proof (%d hashes) differs from the tiles' proof (%d hashes) at position %d",
				index, treeSize, len(proof), len(fromTiles), at)
		}
		fmt.Fprintf(stdout, "inclusion %d in %d: ok (%d hashes, equal to the proof from the tiles)\n", index, treeSize, len(proof))
	}

	for _, item := range in.Consistency {
		first, second, firstRoot, proof := *item.First, *item.Second, item.firstRoot, item.proof
		if second != cp.size {
			return failf("consistency %d to %d: the checkpoint's size is %d; only proofs to the checkpoint's tree can be checked",
				first, second, cp.size)
		}
		if first < 1 || first > second {
			return failf("consistency %d to %d: first must be between 1 and %d", first, second, second)
		}
		if err := tlog.CheckTree(tlog.TreeProof(proof), second, cp.root, first, firstRoot); err != nil {
			return failf("consistency %d to %d: proof does not verify: %v", first, second, err)
		}
		fromTiles, err := tlog.ProveTree(second, first, hashes)
		if err != nil {
			return failf("consistency %d to %d: proof from the tiles: %v", first, second, err)
		}
		if at := sameProof(proof, fromTiles); at >= 0 {
			return failf("consistency %d to %d: served proof (%d hashes) differs from the tiles' proof (%d hashes) at position %d",
				first, second, len(proof), len(fromTiles), at)
		}
		oldRoot, err := tlog.TreeHash(first, hashes)
		if err != nil {
			return failf("consistency %d to %d: tree hash of %d from the tiles: %v", first, second, first, err)
		}
		if oldRoot != firstRoot {
			return failf("consistency %d to %d: the tiles give %s for size %d, not %s", first, second, hx(oldRoot), first, hx(firstRoot))
		}
		fmt.Fprintf(stdout, "consistency %d to %d: ok (%d hashes, equal to the proof from the tiles)\n", first, second, len(proof))
	}

	fmt.Fprintf(stdout, "ok: %d inclusion and %d consistency proof(s) verified against %s at size %d\n",
		len(in.Inclusion), len(in.Consistency), verifier.Name(), cp.size)
	return nil
}
