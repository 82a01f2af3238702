package ui

import (
	"context"
	"encoding/json"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/leaselab/leaselab/templates/i18n"
	"github.com/leaselab/leaselab/wasm/said"
	"github.com/leaselab/leaselab/web/lease/election"
	"github.com/leaselab/leaselab/web/lease/judge"
)

// keyLiteral is a quoted string that is a message key: one of the catalog's parts, a dot and
// a name (a literal that ends with a dot is the start of a key made at run time).
var keyLiteral = regexp.MustCompile(`["'\x60]((?:nav|conn|layout|replay|error|moment|time|state|dash|faults|lease|decision|play|js|judge|advice|age|span|timeline|status|form|timings|lang|log|fault|config|upstream|scn|delay|election|follow|tp|arena)\.[A-Za-z0-9][A-Za-z0-9.-]*)["'\x60]`)

// notKeys look like message keys and are not: file names, a field path, and the judge's list,
// which the screens put in each language themselves (says).
var notKeys = map[string]bool{"lease.js": true, "play.js": true, "timings.js": true, "follow.js": true, "arena.js": true, "status.phase": true, judge.KeyList: true, election.KeyList: true}

// TestCatalogKeysUsed: every message key the pages, their scripts, the judge, the calculator
// and the candidate use is in the catalog, in both languages.
func TestCatalogKeysUsed(t *testing.T) {
	msgs := i18n.Messages()
	root := filepath.Join("..", "..", "..")
	seen := 0
	for _, dir := range []string{"templates", "web", "wasm"} {
		err := filepath.WalkDir(filepath.Join(root, dir), func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			name := d.Name()
			if d.IsDir() || strings.HasSuffix(name, "_test.go") || strings.HasSuffix(name, "_templ.go") || name == "wasm_exec.js" ||
				!(strings.HasSuffix(name, ".go") || strings.HasSuffix(name, ".templ") || strings.HasSuffix(name, ".js")) {
				return nil
			}
			b, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			for _, m := range keyLiteral.FindAllStringSubmatch(string(b), -1) {
				key := m[1]
				if strings.HasSuffix(key, ".") || notKeys[key] {
					continue
				}
				seen++
				if v, ok := msgs[key]; !ok {
					t.Errorf("%s uses the message %q, which the catalog lacks", path, key)
				} else if v.En == "" && key != "log.plain" || v.Zh == "" {
					t.Errorf("message %q lacks a language: %+v", key, v)
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	if seen < 300 {
		t.Errorf("found only %d uses of message keys: is the scan still reading the sources?", seen)
	}
}

// TestSentencesInChinese: the state words and the judge's feed lines have a Chinese of their
// own.
func TestSentencesInChinese(t *testing.T) {
	zh := i18n.WithLang(context.Background(), i18n.ZH)
	if got := i18n.T(zh, "state.leader"); got != "领导者" {
		t.Errorf("state.leader in Chinese: %q", got)
	}
	terms := judge.Terms([]judge.Change{write(0, "alice", 10, 0), write(5, "bob", 10, 1)}, at(60))
	told := judge.Tell("default/demo", terms)
	if len(told) == 0 {
		t.Fatal("nothing told")
	}
	for _, tl := range told {
		s := tl.Says.Both()
		if s.En != tl.Text || s.Zh == "" || s.Zh == s.En {
			t.Errorf("%q in Chinese: %q", tl.Text, s.Zh)
		}
	}
}

// TestChineseSentencesSpacedWhereTheyJoin: where the parts of a judge's sentence meet, the
// Chinese is spaced as Chinese is: no space between Chinese words, one before an identity.
func TestChineseSentencesSpacedWhereTheyJoin(t *testing.T) {
	length := said.Say("judge.scaledLength", "12.3 s", "3.1 s")
	for _, tc := range []struct {
		s    said.Said
		want string
	}{
		{said.Say("judge.forSpan", length, "12:00:01.0", "12:00:04.1"), "，持续了候选者时钟上的 12.3 s（服务器时钟上的 3.1 s）（12:00:01.0 至 12:00:04.1）"},
		{said.Say("judge.forSpan", "4.0 s", "12:00:01.0", "12:00:05.0"), "，持续了 4.0 s（12:00:01.0 至 12:00:05.0）"},
		{said.Say("judge.alsoWhy", said.Same("bob")), "；而且 bob"},
		// Lengths in the judge's words are in the sentence's language, in minutes from 100 s.
		{said.Say("judge.forSpan", said.Say("judge.secs", "4.0"), "12:00:01.0", "12:00:05.0"), "，持续了 4.0 秒（12:00:01.0 至 12:00:05.0）"},
		{said.Say("judge.forSpan", said.Say("judge.minSecs", 1, 51), "12:00:01.0", "12:01:52.3"), "，持续了 1 分 51 秒（12:00:01.0 至 12:01:52.3）"},
	} {
		if got := tc.s.Both().Zh; got != tc.want {
			t.Errorf("%s in Chinese:\n got %q\nwant %q", tc.s.English(), got, tc.want)
		}
	}
}

// TestScriptsHaveTheirMessages: every message key the scripts name is in the messages each page
// embeds for them, in both languages.
func TestScriptsHaveTheirMessages(t *testing.T) {
	tu := mustNewUI(t, t0)
	scripts, err := filepath.Glob(filepath.Join("static", "*.js"))
	if err != nil || len(scripts) < 4 {
		t.Fatalf("scripts: %v %v", scripts, err)
	}
	var keys []string
	for _, p := range scripts {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range keyLiteral.FindAllStringSubmatch(string(b), -1) {
			if !strings.HasSuffix(m[1], ".") && !notKeys[m[1]] {
				keys = append(keys, m[1])
			}
		}
	}
	for _, lang := range []string{"en", "zh"} {
		doc := tu.mustGetDoc(t, "/?lang="+lang, http.StatusOK)
		var msgs map[string]string
		if err := json.Unmarshal([]byte(doc.Find("script#i18n").Text()), &msgs); err != nil {
			t.Fatalf("%s: the page's messages: %v", lang, err)
		}
		for _, k := range keys {
			if msgs[k] == "" {
				t.Errorf("%s: the scripts use %q, which the page does not embed", lang, k)
			}
		}
		for _, prefix := range []string{"js.logkind.", "js.cmd.", "decision.", "state.", "log.", "fault."} {
			found := false
			for k := range msgs {
				found = found || strings.HasPrefix(k, prefix)
			}
			if !found {
				t.Errorf("%s: the page embeds no %s messages, which the scripts make keys of", lang, prefix)
			}
		}
	}
}

// verb matches a fmt verb of a catalog sentence (%s, %d, %[2]s, %.1f), not a literal %%.
var verb = regexp.MustCompile(`%(?:\[\d+\])?[-+# 0]*\d*(?:\.\d+)?[a-zA-Z]`)

// TestCatalogWhole: every sentence of the one catalog (all the server links: the pages', the
// judge's, the controller's, the calculator's, the candidate's) has both languages, the Chinese
// its own words, and as many arguments in each.
func TestCatalogWhole(t *testing.T) {
	keys := said.Keys("")
	if len(keys) < 800 {
		t.Fatalf("the catalog holds only %d sentences: is a package's table no longer linked?", len(keys))
	}
	for _, k := range keys {
		s, _ := said.Lookup(k)
		en, zh := strings.ReplaceAll(s.En, "%%", ""), strings.ReplaceAll(s.Zh, "%%", "")
		switch {
		case s.Zh == "" || s.En == "" && k != "log.plain":
			t.Errorf("%s lacks a language: %+v", k, s)
		case len(verb.FindAllString(en, -1)) != len(verb.FindAllString(zh, -1)):
			t.Errorf("%s: the languages take different arguments: %q, %q", k, s.En, s.Zh)
		case s.En == s.Zh && strings.Count(verb.ReplaceAllString(s.En, ""), " ") >= 2:
			t.Errorf("%s: the Chinese is the English: %q", k, s.Zh)
		}
	}
}
