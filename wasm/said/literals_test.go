package said_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// speaking are the parts of the repository that speak to people: the lease domain, the
// playground, the templates and the browser candidate. (The API server answers in the
// Kubernetes API's own English, as kube-apiserver does, and the command line and logs speak to
// operators in English.)
var speaking = []string{"web/lease", "web/play", "templates", "wasm/candidate", "wasm/tabproto"}

// englishWord matches words that a sentence has and a name, a path or a format seldom does.
var englishWord = regexp.MustCompile(`(?i)\b(the|a|an|is|are|was|were|to|of|and|or|not|no|it|its|by|for|from|with|this|that|has|have|be|been|can|cannot|will|when|while|after|before|until|who|what|which|your|you|my|me|i|in|on|at)\b`)

// TestNoEnglishOutsideTheCatalog fails on an English sentence written as a string literal in a
// speaking package outside the catalog: every sentence is written once, in both languages, as a
// said.Text registered by its package (or a Text in a lesson's data). Errors (errors.New,
// fmt.Errorf), panics and logs are for developers and stay English; so are the literals of
// tests and of templ's generated code, whose words come from the catalog by key. What must stay
// English for another reason (the words of client-go or kube-apiserver quoted exactly, a
// protocol's close reason) says so with a //said:english comment and the reason, on its line or
// in its declaration's doc comment.
func TestNoEnglishOutsideTheCatalog(t *testing.T) {
	var found []string
	fset := token.NewFileSet()
	for _, dir := range speaking {
		err := filepath.WalkDir(filepath.Join("..", "..", dir), func(path string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") || strings.HasSuffix(path, "_templ.go") {
				return err
			}
			f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution|parser.ParseComments)
			if err != nil {
				return err
			}
			found = append(found, sentencesOutside(fset, f, englishLines(fset, f))...)
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	for _, s := range found {
		t.Errorf("an English sentence outside the catalog: %s", s)
	}
}

// sentencesOutside lists the English sentences among f's string literals that are neither in a
// Text nor said to developers.
func sentencesOutside(fset *token.FileSet, f *ast.File, english map[int]bool) []string {
	var out []string
	var walk func(n ast.Node) bool
	walk = func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.FuncDecl:
			if marked(n.Doc) {
				return false
			}
		case *ast.GenDecl:
			if marked(n.Doc) {
				return false
			}
		case *ast.ImportSpec, *ast.Field:
			return false
		case *ast.KeyValueExpr:
			if id, ok := n.Key.(*ast.Ident); ok && (id.Name == "En" || id.Name == "Zh") {
				return false // a Text
			}
		case *ast.CallExpr:
			if forDevelopers(n) {
				return false
			}
		case *ast.BasicLit:
			if n.Kind != token.STRING {
				return true
			}
			s, err := strconv.Unquote(n.Value)
			if err == nil && isSentence(s) && !english[fset.Position(n.Pos()).Line] {
				out = append(out, fset.Position(n.Pos()).String()+": "+strconv.Quote(s))
			}
		}
		return true
	}
	ast.Inspect(f, walk)
	return out
}

// englishLines are the lines of f that end in a //said:english comment with its reason.
func englishLines(fset *token.FileSet, f *ast.File) map[int]bool {
	lines := map[int]bool{}
	for _, g := range f.Comments {
		if marked(g) {
			lines[fset.Position(g.End()).Line] = true
		}
	}
	return lines
}

// marked reports whether g says, with a reason, that what it stands beside stays English.
func marked(g *ast.CommentGroup) bool {
	if g == nil {
		return false
	}
	for _, c := range g.List {
		if why, ok := strings.CutPrefix(c.Text, "//said:english "); ok && strings.TrimSpace(why) != "" {
			return true
		}
	}
	return false
}

// forDevelopers reports whether call says something to developers and operators: an error, a
// panic, a log line.
func forDevelopers(call *ast.CallExpr) bool {
	switch fn := call.Fun.(type) {
	case *ast.Ident:
		return fn.Name == "panic"
	case *ast.SelectorExpr:
		if pkg, ok := fn.X.(*ast.Ident); ok {
			switch pkg.Name + "." + fn.Sel.Name {
			case "errors.New", "fmt.Errorf":
				return true
			}
		}
		switch fn.Sel.Name {
		case "Debug", "Info", "Warn", "Error", "DebugContext", "InfoContext", "WarnContext", "ErrorContext", "Printf", "Println", "Fatalf":
			return true
		}
	}
	return false
}

// isSentence reports whether s reads as English words: three or more of them, one a word
// sentences have.
func isSentence(s string) bool {
	if strings.ContainsAny(s, "<>{}=/\\") && !strings.Contains(s, " ") {
		return false
	}
	words := strings.FieldsFunc(s, func(r rune) bool { return r == ' ' || r == '\n' || r == '\t' })
	letters := 0
	for _, w := range words {
		if strings.IndexFunc(w, func(r rune) bool { return r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' }) >= 0 {
			letters++
		}
	}
	return letters >= 3 && englishWord.MatchString(s)
}
