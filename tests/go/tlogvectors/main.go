// Command tlogvectors prints, for a log of N leaves, what Go's golang.org/x/mod/sumdb/tlog
// computes for it, so the Beacon's TypeScript tile and proof code can be compared with an
// independent implementation.
//
// Leaf i's data is the UTF-8 text "leaf <i>" (decimal i); its leaf hash is
// tlog.RecordHash(data) = SHA-256(0x00 || data), as in RFC 6962.
//
// Usage: tlogvectors N (N >= 0). Output, one JSON object (all hashes lowercase hex):
//
//	{"size": N,
//	 "root": "<tree hash; SHA-256 of nothing when N is 0>",
//	 "tiles": {"<C2SP tile path, tile/L/NNN[.p/W]>": "<tile bytes>", ...},
//	 "inclusion": {"<i>": ["<hash>", ...], ...},
//	 "consistency": {"<m>": ["<hash>", ...], ...},
//	 "leafHashes": {"<i>": "<hash>", ...},
//	 "roots": {"<m>": "<tree hash of the first m leaves>", ...}}
//
// "tiles" holds every full tile and, at each level, the one partial tile of a tree of size N
// (width floor(N / 256**L) mod 256, when not zero). "inclusion" holds proofs that leaf i is in
// the tree of size N for a few i (0, 1, N/2, N-2, N-1 where they exist), "consistency" proofs
// from the tree of size m to the tree of size N for a few m (1, 2, N/2, N-1, N), "leafHashes"
// the leaf hashes of those i and "roots" the tree hashes of those m.
//
// Build without network access:
//
//	GO111MODULE=off GOPATH=/usr/share/gocode go build -o tlogvectors ./tests/go/tlogvectors
package main

import (
	"bufio"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"strconv"
	"strings"

	"golang.org/x/mod/sumdb/tlog"
)

const tileHeight = 8

// The largest N accepted: a few million stored hashes stay well within memory.
const maxSize = 1 << 22

type vectors struct {
	Size        int64               `json:"size"`
	Root        string              `json:"root"`
	Tiles       map[string]string   `json:"tiles"`
	Inclusion   map[string][]string `json:"inclusion"`
	Consistency map[string][]string `json:"consistency"`
	LeafHashes  map[string]string   `json:"leafHashes"`
	Roots       map[string]string   `json:"roots"`
}

// memoryLog holds every stored hash of the log, in tlog's storage order.
type memoryLog struct {
	stored []tlog.Hash
}

func (m *memoryLog) ReadHashes(indexes []int64) ([]tlog.Hash, error) {
	out := make([]tlog.Hash, len(indexes))
	for i, x := range indexes {
		if x < 0 || x >= int64(len(m.stored)) {
			return nil, fmt.Errorf("stored hash %d not written yet (have %d)", x, len(m.stored))
		}
		out[i] = m.stored[x]
	}
	return out, nil
}

func leafData(i int64) []byte {
	return []byte("leaf " + strconv.FormatInt(i, 10))
}

func hx(h tlog.Hash) string { return hex.EncodeToString(h[:]) }

func hexList(hashes []tlog.Hash) []string {
	out := make([]string, len(hashes))
	for i, h := range hashes {
		out[i] = hx(h)
	}
	return out
}

// picks returns the distinct values of candidates within [lo, hi], in order.
func picks(lo, hi int64, candidates ...int64) []int64 {
	seen := make(map[int64]bool)
	var out []int64
	for _, c := range candidates {
		if c >= lo && c <= hi && !seen[c] {
			seen[c] = true
			out = append(out, c)
		}
	}
	return out
}

func build(n int64) (*vectors, error) {
	log := &memoryLog{stored: make([]tlog.Hash, 0, tlog.StoredHashCount(n))}
	for i := int64(0); i < n; i++ {
		hashes, err := tlog.StoredHashes(i, leafData(i), log)
		if err != nil {
			return nil, err
		}
		log.stored = append(log.stored, hashes...)
	}
	if int64(len(log.stored)) != tlog.StoredHashCount(n) {
		return nil, fmt.Errorf("stored %d hashes, want %d", len(log.stored), tlog.StoredHashCount(n))
	}

	v := &vectors{
		Size:        n,
		Tiles:       make(map[string]string),
		Inclusion:   make(map[string][]string),
		Consistency: make(map[string][]string),
		LeafHashes:  make(map[string]string),
		Roots:       make(map[string]string),
	}
	if n == 0 {
		// RFC 6962: the hash of an empty tree is SHA-256 of the empty string (tlog says zero).
		v.Root = hx(tlog.Hash(sha256.Sum256(nil)))
		return v, nil
	}
	root, err := tlog.TreeHash(n, log)
	if err != nil {
		return nil, err
	}
	v.Root = hx(root)

	for _, t := range tlog.NewTiles(tileHeight, 0, n) {
		// NewTiles from size 0 lists every partial width up to the last one; only the widest
		// (the tile of a tree of size n) belongs to this tree.
		full := t.W == 1<<tileHeight
		if !full && int64(t.W) != (n>>(uint(t.L)*tileHeight))%(1<<tileHeight) {
			continue
		}
		data, err := tlog.ReadTileData(t, log)
		if err != nil {
			return nil, err
		}
		goPath := t.Path()
		if !strings.HasPrefix(goPath, "tile/8/") {
			return nil, fmt.Errorf("unexpected tile path %s", goPath)
		}
		v.Tiles["tile/"+strings.TrimPrefix(goPath, "tile/8/")] = hex.EncodeToString(data)
	}

	for _, i := range picks(0, n-1, 0, 1, n/2, n-2, n-1) {
		proof, err := tlog.ProveRecord(n, i, log)
		if err != nil {
			return nil, err
		}
		leaf := tlog.RecordHash(leafData(i))
		if err := tlog.CheckRecord(proof, n, root, i, leaf); err != nil {
			return nil, fmt.Errorf("inclusion %d in %d does not verify: %v", i, n, err)
		}
		key := strconv.FormatInt(i, 10)
		v.Inclusion[key] = hexList(proof)
		v.LeafHashes[key] = hx(leaf)
	}
	for _, m := range picks(1, n, 1, 2, n/2, n-1, n) {
		proof, err := tlog.ProveTree(n, m, log)
		if err != nil {
			return nil, err
		}
		old, err := tlog.TreeHash(m, log)
		if err != nil {
			return nil, err
		}
		if err := tlog.CheckTree(proof, n, root, m, old); err != nil {
			return nil, fmt.Errorf("consistency %d to %d does not verify: %v", m, n, err)
		}
		key := strconv.FormatInt(m, 10)
		v.Consistency[key] = hexList(proof)
		v.Roots[key] = hx(old)
	}
	return v, nil
}

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: tlogvectors N")
		os.Exit(2)
	}
	n, err := strconv.ParseInt(os.Args[1], 10, 64)
	if err != nil || n < 0 || n > maxSize {
		fmt.Fprintf(os.Stderr, "usage: tlogvectors N (0 <= N <= %d)\n", maxSize)
		os.Exit(2)
	}
	v, err := build(n)
	if err != nil {
		fmt.Fprintln(os.Stderr, "tlogvectors: "+err.Error())
		os.Exit(1)
	}
	out := bufio.NewWriter(os.Stdout)
	if err := json.NewEncoder(out).Encode(v); err != nil {
		fmt.Fprintln(os.Stderr, "tlogvectors: "+err.Error())
		os.Exit(1)
	}
	if err := out.Flush(); err != nil {
		fmt.Fprintln(os.Stderr, "tlogvectors: "+err.Error())
		os.Exit(1)
	}
}
