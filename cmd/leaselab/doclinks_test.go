package main

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"unicode"
)

// mdLink is a Markdown link or image: [text](target) or ![alt](target "title").
var mdLink = regexp.MustCompile(`\]\(([^)\s]+)(?:\s+"[^"]*")?\)`)

// TestDocLinks: every relative link in the README, BENCHMARKS.md and docs/*.md leads to a file
// of the repository, and a link to a heading of a Markdown file (file.md#heading, or #heading
// in the same file) names a heading that file has, as GitHub makes its anchors.
func TestDocLinks(t *testing.T) {
	const root = "../.."
	docs, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	files := append([]string{filepath.Join(root, "README.md"), filepath.Join(root, "BENCHMARKS.md")}, docs...)
	if len(docs) == 0 {
		t.Fatal("no docs/*.md")
	}
	anchors := map[string]map[string]bool{} // Markdown file -> its headings' anchors
	anchorsOf := func(path string) map[string]bool {
		if a, ok := anchors[path]; ok {
			return a
		}
		text, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		a := map[string]bool{}
		for _, line := range proseLines(string(text)) {
			if h, ok := strings.CutPrefix(line, "#"); ok {
				a[headingAnchor(strings.TrimLeft(h, "#"))] = true
			}
		}
		anchors[path] = a
		return a
	}
	links := 0
	for _, file := range files {
		text, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		rel, _ := filepath.Rel(root, file)
		for n, line := range proseLines(string(text)) {
			for _, m := range mdLink.FindAllStringSubmatch(line, -1) {
				target := m[1]
				if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
					continue
				}
				links++
				where := fmt.Sprintf("%s, line %d: %s", rel, n+1, target)
				path, anchor, _ := strings.Cut(target, "#")
				dest := file
				if path != "" {
					dest = filepath.Join(filepath.Dir(file), filepath.FromSlash(path))
					if _, err := os.Stat(dest); err != nil {
						t.Errorf("%s: no such file", where)
						continue
					}
				}
				if anchor != "" && strings.HasSuffix(dest, ".md") && !anchorsOf(dest)[anchor] {
					t.Errorf("%s: %s has no heading #%s", where, filepath.Base(dest), anchor)
				}
			}
		}
	}
	if links < 10 {
		t.Errorf("found only %d relative links: is the link pattern still right?", links)
	}
}

// proseLines is a Markdown text's lines with those of fenced code blocks and inline code spans
// blanked, so that code is never read as links or headings. Line numbers are kept.
func proseLines(text string) []string {
	lines := strings.Split(text, "\n")
	fenced := false
	code := regexp.MustCompile("`[^`]*`")
	for i, line := range lines {
		if strings.HasPrefix(strings.TrimSpace(line), "```") {
			fenced = !fenced
			lines[i] = ""
			continue
		}
		if fenced {
			lines[i] = ""
			continue
		}
		lines[i] = code.ReplaceAllStringFunc(line, func(s string) string {
			return strings.Trim(s, "`") // headings keep the words of their code
		})
	}
	return lines
}

// headingAnchor is the anchor GitHub gives a heading: lower case, punctuation dropped, spaces
// made hyphens.
func headingAnchor(h string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(strings.TrimSpace(h)) {
		switch {
		case r == ' ':
			b.WriteRune('-')
		case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r):
			b.WriteRune(r)
		}
	}
	return b.String()
}

// TestDocSizes: the README stays a page a newcomer reads (under 400 lines) and BENCHMARKS.md the
// current figures (under 300); the details live in docs/ and the history in git.
func TestDocSizes(t *testing.T) {
	for file, limit := range map[string]int{"README.md": 400, "BENCHMARKS.md": 300} {
		text, err := os.ReadFile(filepath.Join("..", "..", file))
		if err != nil {
			t.Fatal(err)
		}
		if n := strings.Count(string(text), "\n"); n >= limit {
			t.Errorf("%s has %d lines, want under %d", file, n, limit)
		}
	}
}
