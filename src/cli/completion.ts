// `rendergate completion bash|zsh`: a completion script made from the command table, so it never
// drifts from the commands. Install: `source <(rendergate completion bash)` (zsh: bashcompinit).
import { COMMANDS, GLOBAL_OPTIONS, GROUPS } from './commands.ts';
import { UsageError } from './cli-error.ts';

export function completionScript(shell: string): string {
  if (shell !== 'bash' && shell !== 'zsh')
    throw new UsageError('completion: the shell must be bash or zsh');
  const top = [...new Set(COMMANDS.map((c) => c.name.split(' ')[0]))].join(' ');
  const cases = [...GROUPS].map((g) => {
    const words = COMMANDS.filter((c) => c.name.startsWith(g + ' ')).map(
      (c) => c.name.split(' ')[1],
    );
    return `    ${g}) words="${words.join(' ')}" ;;`;
  });
  const global = Object.keys(GLOBAL_OPTIONS).map((o) => `--${o}`);
  const flagCases = COMMANDS.map((c) => {
    const own = Object.keys(c.options).map((o) => `--${o}`);
    const flags = ['--help', ...own, ...global].join(' ');
    return `    "${c.name}") flags="${flags}" ;;`;
  });
  const body = `_rendergate() {
  local cur=\${COMP_WORDS[COMP_CWORD]} words="" flags="--help"
  if [ "$COMP_CWORD" -eq 1 ]; then
    COMPREPLY=($(compgen -W "${top} --help --version ${global.join(' ')}" -- "$cur")); return
  fi
  local first=\${COMP_WORDS[1]}
  if [ "$COMP_CWORD" -eq 2 ]; then
    case "$first" in
${cases.join('\n')}
    esac
    if [ -n "$words" ]; then COMPREPLY=($(compgen -W "$words" -- "$cur")); return; fi
  fi
  local name="$first"
  case " ${[...GROUPS].join(' ')} " in *" $first "*) name="$first \${COMP_WORDS[2]}" ;; esac
  case "$name" in
${flagCases.join('\n')}
  esac
  COMPREPLY=($(compgen -W "$flags" -- "$cur"))
}
complete -o default -F _rendergate rendergate
`;
  return shell === 'zsh' ? `autoload -U +X bashcompinit && bashcompinit\n${body}` : body;
}
