package main

import (
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/alecthomas/kong"
)

// CompletionCmd prints a shell completion script generated from the
// command line's own model, so that it cannot drift from the commands.
type CompletionCmd struct {
	Shell string `arg:"" enum:"bash,zsh,fish" help:"Shell: bash, zsh or fish." placeholder:"SHELL"`
}

// Help explains how to load the script.
func (c *CompletionCmd) Help() string {
	return `Load it in the current shell or install it once:

  bash:  source <(onboard completion bash)
         onboard completion bash > /etc/bash_completion.d/onboard
  zsh:   source <(onboard completion zsh)     (after compinit)
         onboard completion zsh > "${fpath[1]}/_onboard"
  fish:  onboard completion fish > ~/.config/fish/completions/onboard.fish`
}

// Run prints the script for the shell on stdout.
func (c *CompletionCmd) Run(kctx *kong.Context, e *env) error {
	cmds := completionModel(kctx.Model.Node)
	switch c.Shell {
	case "bash":
		writeShCompletion(e.stdout, cmds, bashDialect())
	case "zsh":
		writeShCompletion(e.stdout, cmds, zshDialect())
	default:
		writeFishCompletion(e.stdout, cmds)
	}
	return nil
}

// compCommand is one command of the completion model: its path ("onboard
// keys create"), its subcommands and every flag it accepts, its parents'
// included.
type compCommand struct {
	path     string
	children []compItem
	flags    []compFlag
}

// compItem is a subcommand with its one-line help.
type compItem struct{ name, help string }

// compFlag is a flag: name without dashes, one-line help, and for a flag
// that takes a value the values to offer (enum), or "file" or "dir".
type compFlag struct {
	name, help string
	value      bool
	enum       []string
	kind       string
}

// completionModel walks the kong model from the application node, commands
// first in the order of the CLI type.
func completionModel(root *kong.Node) []compCommand {
	var out []compCommand
	var walk func(n *kong.Node, path string)
	walk = func(n *kong.Node, path string) {
		c := compCommand{path: path}
		for _, child := range n.Children {
			if child.Type == kong.CommandNode && !child.Hidden {
				c.children = append(c.children, compItem{child.Name, firstSentence(child.Help)})
			}
		}
		for _, group := range n.AllFlags(true) {
			for _, f := range group {
				cf := compFlag{name: f.Name, help: firstSentence(f.Help), value: !f.IsBool() && !f.IsCounter()}
				switch {
				case f.Enum != "":
					cf.enum = f.EnumSlice()
				case strings.Contains(f.PlaceHolder, "|"): // such as ndjson|csv
					cf.enum = strings.Split(f.PlaceHolder, "|")
				case f.PlaceHolder == "FILE":
					cf.kind = "file"
				case f.PlaceHolder == "DIR":
					cf.kind = "dir"
				}
				c.flags = append(c.flags, cf)
			}
		}
		out = append(out, c)
		for _, child := range n.Children {
			if child.Type == kong.CommandNode && !child.Hidden {
				walk(child, path+" "+child.Name)
			}
		}
	}
	walk(root, root.Name)
	return out
}

// firstSentence is the first sentence of help, for a completion menu.
func firstSentence(help string) string {
	help, _, _ = strings.Cut(help, "\n")
	if i := strings.Index(help, ". "); i >= 0 {
		help = help[:i+1]
	}
	return help
}

// valueFlags are the names (with dashes) of every flag that takes a value:
// the word after one is its value, not a command.
func valueFlags(cmds []compCommand) []string {
	var out []string
	for _, c := range cmds {
		for _, f := range c.flags {
			if f.value && !slices.Contains(out, "--"+f.name) {
				out = append(out, "--"+f.name)
			}
		}
	}
	return out
}

// paths are the paths of every command but the application itself.
func paths(cmds []compCommand) []string {
	var out []string
	for _, c := range cmds[1:] {
		out = append(out, c.path)
	}
	return out
}

// shQuote quotes s for bash and zsh in single quotes, each quote inside
// closing, escaping and reopening them.
func shQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

// fishQuote quotes s for fish: single quotes, with \ and ' escaped.
func fishQuote(s string) string {
	return "'" + strings.NewReplacer(`\`, `\\`, `'`, `\'`).Replace(s) + "'"
}

// quoteAll quotes each of ss with quote and joins them with sep.
func quoteAll(ss []string, quote func(string) string, sep string) string {
	q := make([]string, len(ss))
	for i, s := range ss {
		q[i] = quote(s)
	}
	return strings.Join(q, sep)
}

// shDialect is what the bash and zsh scripts write differently; the rest
// of the two is writeShCompletion's, once.
type shDialect struct {
	head string // up to the loop over the words before the cursor, inclusive
	prev string // the word before the cursor
	// enum, file and dir complete a flag's value: values to offer, a file
	// or a directory.
	enum      func(values []string) string
	file, dir string
	noValue   string // the line after the values' cases; "" for none
	cur       string // the word being completed
	// item is a subcommand or a flag as offered; list makes the offer of
	// items, after assign.
	item   func(name, help string) string
	list   func(items []string) string
	assign string
	tail   string // after the case of the commands
}

// bashDialect finds the command path in the words before the cursor,
// skipping flag values, and offers that command's subcommands, or its
// flags when the word starts with "-", or the values of the flag before
// the cursor.
func bashDialect() shDialect {
	return shDialect{
		head: `# bash completion for onboard (generated by: onboard completion bash)
# Load it with: source <(onboard completion bash)
_onboard() {
    local cur="${COMP_WORDS[COMP_CWORD]}" cmd="onboard" word i skip=0 words=""
    for (( i = 1; i < COMP_CWORD; i++ )); do
        word="${COMP_WORDS[i]}"
`,
		prev: "${COMP_WORDS[COMP_CWORD-1]}",
		enum: func(v []string) string {
			return `COMPREPLY=($(compgen -W ` + shQuote(strings.Join(v, " ")) + ` -- "$cur"))`
		},
		file:    `COMPREPLY=($(compgen -f -- "$cur"))`,
		dir:     `COMPREPLY=($(compgen -d -- "$cur"))`,
		noValue: "            *) COMPREPLY=() ;;\n",
		cur:     "$cur",
		item:    func(name, _ string) string { return name },
		list:    func(items []string) string { return shQuote(strings.Join(items, " ")) },
		assign:  "words=",
		tail: `    COMPREPLY=($(compgen -W "$words" -- "$cur"))
}
complete -F _onboard onboard
`,
	}
}

// zshDialect does what bashDialect does, with the help of each command
// and flag beside it.
func zshDialect() shDialect {
	return shDialect{
		head: `#compdef onboard
# zsh completion for onboard (generated by: onboard completion zsh)
# Load it with: source <(onboard completion zsh), or save it as _onboard in $fpath.
_onboard() {
    local cmd="onboard" word i skip=0
    local -a items
    for (( i = 2; i < CURRENT; i++ )); do
        word="${words[i]}"
`,
		prev:   "${words[CURRENT-1]}",
		enum:   func(v []string) string { return "compadd -- " + quoteAll(v, shQuote, " ") },
		file:   "_files",
		dir:    "_files -/",
		cur:    "$PREFIX",
		item:   func(name, help string) string { return name + ":" + help },
		list:   func(items []string) string { return "(" + quoteAll(items, shQuote, " ") + ")" },
		assign: "items=",
		tail: `    _describe -t onboard onboard items
}
if [[ "${funcstack[1]}" == _onboard ]]; then
    _onboard "$@"
else
    compdef _onboard onboard
fi
`,
	}
}

// writeShCompletion writes the bash or zsh script of sh.
func writeShCompletion(w io.Writer, cmds []compCommand, sh shDialect) {
	fmt.Fprintf(w, `%s        if (( skip )); then skip=0; continue; fi
        case "$word" in
            %s) skip=1; continue ;;
        esac
        case "$cmd $word" in
            %s) cmd="$cmd $word" ;;
        esac
    done
    if (( skip )); then
        case "$cmd %s" in
`, sh.head, quoteAll(valueFlags(cmds), shQuote, "|"), quoteAll(paths(cmds), shQuote, "|"), sh.prev)
	for _, c := range cmds {
		for _, f := range c.flags {
			if !f.value {
				continue
			}
			complete := ""
			switch {
			case f.enum != nil:
				complete = sh.enum(f.enum)
			case f.kind == "file":
				complete = sh.file
			case f.kind == "dir":
				complete = sh.dir
			default:
				continue
			}
			fmt.Fprintf(w, "            %s) %s ;;\n", shQuote(c.path+" --"+f.name), complete)
		}
	}
	fmt.Fprintf(w, `%s        esac
        return 0
    fi
    case "$cmd" in
`, sh.noValue)
	for _, c := range cmds {
		var flags, children []string
		for _, f := range c.flags {
			flags = append(flags, sh.item("--"+f.name, f.help))
		}
		for _, ch := range c.children {
			children = append(children, sh.item(ch.name, ch.help))
		}
		fmt.Fprintf(w, "        %s)\n", shQuote(c.path))
		if len(children) > 0 {
			fmt.Fprintf(w, "            if [[ %s == -* ]]; then %s%s; else %s%s; fi ;;\n",
				sh.cur, sh.assign, sh.list(flags), sh.assign, sh.list(children))
		} else {
			fmt.Fprintf(w, "            %s%s ;;\n", sh.assign, sh.list(flags))
		}
	}
	fmt.Fprint(w, "    esac\n"+sh.tail)
}

// writeFishCompletion writes a fish script: a function that finds the
// command path before the cursor, and one complete line per subcommand
// and flag, conditioned on that path.
func writeFishCompletion(w io.Writer, cmds []compCommand) {
	fmt.Fprintf(w, `# fish completion for onboard (generated by: onboard completion fish)
# Install it with: onboard completion fish > ~/.config/fish/completions/onboard.fish
function __onboard_command
    set -l words (commandline -opc)
    set -e words[1]
    set -l cmd onboard
    set -l skip 0
    for word in $words
        if test $skip -eq 1
            set skip 0
            continue
        end
        if contains -- $word %s
            set skip 1
            continue
        end
        if contains -- "$cmd $word" %s
            set cmd "$cmd $word"
        end
    end
    echo $cmd
end

function __onboard_at
    test (__onboard_command) = "$argv[1]"
end

complete -c onboard -f
`, quoteAll(valueFlags(cmds), fishQuote, " "), quoteAll(paths(cmds), fishQuote, " "))
	for _, c := range cmds {
		cond := fishQuote("__onboard_at " + fishQuote(c.path))
		for _, ch := range c.children {
			fmt.Fprintf(w, "complete -c onboard -n %s -a %s -d %s\n", cond, fishQuote(ch.name), fishQuote(ch.help))
		}
		for _, f := range c.flags {
			line := fmt.Sprintf("complete -c onboard -n %s -l %s -d %s", cond, f.name, fishQuote(f.help))
			switch {
			case f.enum != nil:
				line += " -r -a " + fishQuote(strings.Join(f.enum, " "))
			case f.kind == "file":
				line += " -r -F"
			case f.kind == "dir":
				line += " -r -a '(__fish_complete_directories)'"
			case f.value:
				line += " -r"
			}
			fmt.Fprintln(w, line)
		}
	}
}
