function __metascrub_should_offer_completions_for_flags_or_options -a expected_commands
    set -l non_repeating_flags_or_options $argv[2..]
    set -l non_repeating_flags_or_options_absent 0
    set -l positional_index 0
    set -l commands
    __metascrub_parse_tokens
    test "$commands" = "$expected_commands"; and return $non_repeating_flags_or_options_absent
end

function __metascrub_should_offer_completions_for_positional -a expected_commands positional_index_comparison expected_positional_index
    set -l non_repeating_flags_or_options
    set -l non_repeating_flags_or_options_absent 0
    set -l positional_index 0
    set -l commands
    __metascrub_parse_tokens
    test "$commands" = "$expected_commands" -a \( "$positional_index" "$positional_index_comparison" "$expected_positional_index" \)
end

function __metascrub_parse_tokens -S
    set -l unparsed_tokens (__metascrub_tokens -pc)
    switch $unparsed_tokens[1]
    case 'metascrub'
        __metascrub_parse_subcommand 0 'version' 'h/help'
        switch $unparsed_tokens[1]
        case 'scan'
            __metascrub_parse_subcommand -r 1 'staged' 'policy=' 'format=' 'json' 'report=' 'color=' 'q/quiet' 'v/verbose' 'show-values' 'refuse-damaged' 'jobs=' 'include=+' 'exclude=+' 'config=' 'max-pixels=' 'no-config' 'version' 'h/help'
        case 'clean'
            __metascrub_parse_subcommand -r 1 'o/output=' 'output-dir=' 'in-place' 'staged' 'overwrite' 'exit-code' 'keep-mtime' 'no-keep-mtime' 'allow-uncleaned' 'no-allow-uncleaned' 'copy-unsupported' 'faststart' 'convert=' 'quality=' 'sandbox' 'policy=' 'format=' 'json' 'report=' 'color=' 'q/quiet' 'v/verbose' 'show-values' 'refuse-damaged' 'jobs=' 'include=+' 'exclude=+' 'config=' 'max-pixels=' 'no-config' 'version' 'h/help'
        case 'hook'
            __metascrub_parse_subcommand 0 'version' 'h/help'
            switch $unparsed_tokens[1]
            case 'install'
                __metascrub_parse_subcommand 0 'mode=' 'force' 'version' 'h/help'
            case 'uninstall'
                __metascrub_parse_subcommand 0 'version' 'h/help'
            end
        case 'policy'
            __metascrub_parse_subcommand 0 'version' 'h/help'
            switch $unparsed_tokens[1]
            case 'list'
                __metascrub_parse_subcommand 0 'version' 'h/help'
            case 'show'
                __metascrub_parse_subcommand 1 'version' 'h/help'
            case 'check'
                __metascrub_parse_subcommand 1 'version' 'h/help'
            end
        case 'formats'
            __metascrub_parse_subcommand 0 'hook-pattern' 'version' 'h/help'
        case 'serve'
            __metascrub_parse_subcommand -r 1 'version' 'h/help'
        case 'help'
            __metascrub_parse_subcommand -r 1 'version'
        end
    end
end

function __metascrub_tokens
    if test (string split -m 1 -f 1 -- . "$FISH_VERSION") -gt 3
        commandline --tokens-raw $argv
    else
        commandline -o $argv
    end
end

function __metascrub_parse_subcommand -S -a positional_count
    argparse -s r -- $argv
    set -l option_specs $argv[2..]
    set -l is_repeating_positional $_flag_r
    set -el _flag_r
    set -a commands $unparsed_tokens[1]
    set positional_index 0
    while true
        set -e unparsed_tokens[1]
        argparse -sn "$commands" $option_specs -- $unparsed_tokens 2> /dev/null
        set unparsed_tokens $argv
        set positional_index (math $positional_index + 1)
        for non_repeating_flag_or_option in $non_repeating_flags_or_options
            if set -ql "_flag_$(string replace -a - _ -- $non_repeating_flag_or_option)"
                set non_repeating_flags_or_options_absent 1
                break
            end
        end
        test (count $unparsed_tokens) -eq 0 -o \( -z "$is_repeating_positional" -a "$positional_index" -gt "$positional_count" \) && break
    end
end

function __metascrub_complete_directories
    set -l token (commandline -t)
    string match -- '*/' $token
    set -l subdirs $token*/
    printf %s\n $subdirs
end

function __metascrub_custom_completion
    set -x SAP_SHELL fish
    set -x SAP_SHELL_VERSION $FISH_VERSION
    set -l tokens (__metascrub_tokens -p)
    if test -z "$(__metascrub_tokens -t)"
        set -l index (count (__metascrub_tokens -pc))
        set tokens $tokens[..$index] \'\' $tokens[(math $index + 1)..]
    end
    command $tokens[1] $argv $tokens
end

complete -c 'metascrub' -f
complete -c 'metascrub' -n '__metascrub_should_offer_completions_for_flags_or_options "metascrub" version' -l 'version' -d 'Show the version.'
complete -c 'metascrub' -n '__metascrub_should_offer_completions_for_flags_or_options "metascrub" h help' -s 'h' -l 'help' -d 'Show help information.'
complete -c 'metascrub' -n '__metascrub_should_offer_completions_for_positional "metascrub" -eq 1' -fa 'scan' -d 'List every metadata item and what the policy would do with it. Never writes.'
complete -c 'metascrub' -n '__metascrub_should_offer_completions_for_positional "metascrub" -eq 1' -fa 'clean' -d 'Write copies without the metadata the policy removes; verify each before it replaces anything.'
complete -c 'metascrub' -n '__metascrub_should_offer_completions_for_positional "metascrub" -eq 1' -fa 'hook' -d 'Install or remove a git pre-commit hook that runs metascrub on staged files.'
complete -c 'metascrub' -n '__metascrub_should_offer_completions_for_positional "metascrub" -eq 1' -fa 'policy' -d 'List, show and check policies.'
complete -c 'metascrub' -n '__metascrub_should_offer_completions_for_positional "metascrub" -eq 1' -fa 'formats' -d 'Print the format table: what is recognised, scanned and removed per format.'
complete -c 'metascrub' -n '__metascrub_should_offer_completions_for_positional "metascrub" -eq 1' -fa 'serve' -d 'Run the HTTP scrubbing service: each uploaded file is cleaned and verified in a sandboxed worker process.'
complete -c 'metascrub' -n '__metascrub_should_offer_completions_for_positional "metascrub" -eq 1' -fa 'help' -d 'Show subcommand help information.'
complete -c 'metascrub' -n '__metascrub_should_offer_completions_for_positional "metascrub scan" -ge 1' -F
complete -c 'metascrub' -n '__metascrub_should_offer_completions_for_flags_or_options "metascrub scan" staged' -l 'staged' -d 'Check the files staged in git (the index, not the working tree) instead of paths.'
complete -c 'metascrub' -n '__metascrub_should_offer_completions_for_flags_or_options "metascrub scan" policy' -l 'policy' -d 'Policy: a shipped name (strict, share, location) or a YAML file. Default: strict.' -rfka 'location share strict'
complete -c 'metascrub' -n '__metascrub_should_offer_completions_for_flags_or_options "metascrub scan" format' -l 'format' -d 'Report format on standard output: text, json, sarif or brief (one line per file that needs attention).' -rfka 'text json sarif brief'
complete -c 'metascrub' -n '__metascrub_should_offer_completions_for_flags_or_options "metascrub scan" json' -l 'json' -d 'Shorthand for --format json.'
complete -c 'metascrub' -n '__metascrub_should_offer_completions_for_flags_or_options "metascrub scan" report' -l 'report' -d 'Also write the report to this file (format from its extension: .json, .sarif, else text).' -rF
complete -c 'metascrub' -n '__metascrub_should_offer_completions_for_flags_or_options "metascrub scan" color' -l 'color' -d 'Colour the text report: auto (a terminal, unless NO_COLOR is set), always or never.' -rfka 'auto always never'
complete -c 'metascrub' -n '__metascrub_should_offer_completions_for_flags_or_options "metascrub scan" q quiet' -s 'q' -l 'quiet' -d 'Print nothing on standard output and no progress bar; errors still go to standard error.'
complete -c 'metascrub' -n '__metascrub_should_offer_completions_for_flags_or_options "metascrub scan" v verbose' -s 'v' -l 'verbose' -d 'Also list kept items, notes, policy rules and verification.'
complete -c 'metascrub' -n '__metascrub_should_offer_completions_for_flags_or_options "metascrub scan" show-values' -l 'show-values' -d 'Print metadata values (GPS positions, serial numbers). Off by default: values never reach logs.'
complete -c 'metascrub' -n '__metascrub_should_offer_completions_for_flags_or_options "metascrub scan" refuse-damaged' -l 'refuse-damaged' -d 'Refuse damaged files (cut or corrupt in their media data) instead of cleaning their metadata and copying the damaged part unchanged.'
complete -c 'metascrub' -n '__metascrub_should_offer_completions_for_flags_or_options "metascrub scan" jobs' -l 'jobs' -d 'Files processed in parallel (default: the number of cores).' -rfka ''
complete -c 'metascrub' -n '__metascrub_should_offer_completions_for_flags_or_options "metascrub scan"' -l 'include' -d 'Only files matching this glob, relative to the folder given (repeatable; `**` matches any folders).' -rfka ''
complete -c 'metascrub' -n '__metascrub_should_offer_completions_for_flags_or_options "metascrub scan"' -l 'exclude' -d 'Leave out files and folders matching this glob (repeatable).' -rfka ''
complete -c 'metascrub' -n '__metascrub_should_offer_completions_for_flags_or_options "metascrub scan" config' -l 'config' -d 'Read settings from this file instead of the nearest .metascrub.yaml.' -rfa '(set -l exts \'yaml\' \'yml\';for p in (string match -e -- \'*/\' (commandline -t);or printf \n)*.{$exts};printf %s\n $p;end;__fish_complete_directories (commandline -t) \'\')'
complete -c 'metascrub' -n '__metascrub_should_offer_completions_for_flags_or_options "metascrub scan" max-pixels' -l 'max-pixels' -d 'Most pixels any whole-image decode may have (bake proofs, re-encodes, conversions); above it a bake keeps its tag and a re-encode is refused. Default: the policy\'s max-pixels, else 100000000.' -rfka ''
complete -c 'metascrub' -n '__metascrub_should_offer_completions_for_flags_or_options "metascrub scan" no-config' -l 'no-config' -d 'Ignore .metascrub.yaml files.'
complete -c 'metascrub' -n '__metascrub_should_offer_completions_for_flags_or_options "metascrub scan" version' -l 'version' -d 'Show the version.'
complete -c 'metascrub' -n '__metascrub_should_offer_completions_for_flags_or_options "metascrub scan" h help' -s 'h' -l 'help' -d 'Show help information.'
complete -c 'metascrub' -n '__metascrub_should_offer_completions_for_positional "metascrub clean" -ge 1' -F
complete -c 'metascrub' -n '__metascrub_should_offer_completions_for_flags_or_options "metascrub clean" o output' -s 'o' -l 'output' -d 'Write the cleaned file here (one input only; - for standard output).' -rF
complete -c 'metascrub' -n '__metascrub_should_offer_completions_for_flags_or_options "metascrub clean" output-dir' -l 'output-dir' -d 'Write cleaned files under this folder, mirroring the inputs; other files are copied unchanged.' -rfa '(__metascrub_complete_directories)'
complete -c 'metascrub' -n '__metascrub_should_offer_completions_for_flags_or_options "metascrub clean" in-place' -l 'in-place' -d 'Replace the inputs (atomically, after verification).'
complete -c 'metascrub' -n '__metascrub_should_offer_completions_for_flags_or_options "metascrub clean" staged' -l 'staged' -d 'Clean the files staged in git in the working tree and stage them again.'
complete -c 'metascrub' -n '__metascrub_should_offer_completions_for_flags_or_options "metascrub clean" overwrite' -l 'overwrite' -d 'Replace files that already exist at the output paths. Without it such a file is refused (exit 3) unless it already holds exactly this input\'s output.'
complete -c 'metascrub' -n '__metascrub_should_offer_completions_for_flags_or_options "metascrub clean" exit-code' -l 'exit-code' -d 'Exit 1 when any file was changed (for hooks).'
complete -c 'metascrub' -n '__metascrub_should_offer_completions_for_flags_or_options "metascrub clean" keep-mtime' -l 'keep-mtime' -d 'Give written files the original\'s modification time.'
complete -c 'metascrub' -n '__metascrub_should_offer_completions_for_flags_or_options "metascrub clean" no-keep-mtime' -l 'no-keep-mtime' -d 'Give written files the original\'s modification time.'
complete -c 'metascrub' -n '__metascrub_should_offer_completions_for_flags_or_options "metascrub clean" allow-uncleaned' -l 'allow-uncleaned' -d 'Copy (or leave) media that cannot be cleaned, such as camera raws, unchanged with a warning instead of failing.'
complete -c 'metascrub' -n '__metascrub_should_offer_completions_for_flags_or_options "metascrub clean" no-allow-uncleaned' -l 'no-allow-uncleaned' -d 'Copy (or leave) media that cannot be cleaned, such as camera raws, unchanged with a warning instead of failing.'
complete -c 'metascrub' -n '__metascrub_should_offer_completions_for_flags_or_options "metascrub clean" copy-unsupported' -l 'copy-unsupported' -d 'Copy (or, in place, leave) documents metascrub does not read but that may carry metadata (JPEG 2000, SVG, PDF, office documents, EPUB) unchanged with a warning, instead of leaving them out and exiting 3.'
complete -c 'metascrub' -n '__metascrub_should_offer_completions_for_flags_or_options "metascrub clean" faststart' -l 'faststart' -d 'MP4/MOV: put the movie box before the sample data, so playback can start while downloading.'
complete -c 'metascrub' -n '__metascrub_should_offer_completions_for_flags_or_options "metascrub clean" convert' -l 'convert' -d 'Convert HEIC/HEIF/AVIF, JPEG XL and TIFF to jpeg or png while cleaning (a re-encode, verified by PSNR against the original\'s render; --output-dir outputs get the new extension).' -rfka 'jpeg png'
complete -c 'metascrub' -n '__metascrub_should_offer_completions_for_flags_or_options "metascrub clean" quality' -l 'quality' -d 'JPEG quality for --convert jpeg (1-100; default 92).' -rfka ''
complete -c 'metascrub' -n '__metascrub_should_offer_completions_for_flags_or_options "metascrub clean" sandbox' -l 'sandbox' -d 'Confine this process before reading any file: no core dumps, no network (seccomp; a network namespace where allowed), no exec (as `metascrub serve` does for its workers).'
complete -c 'metascrub' -n '__metascrub_should_offer_completions_for_flags_or_options "metascrub clean" policy' -l 'policy' -d 'Policy: a shipped name (strict, share, location) or a YAML file. Default: strict.' -rfka 'location share strict'
complete -c 'metascrub' -n '__metascrub_should_offer_completions_for_flags_or_options "metascrub clean" format' -l 'format' -d 'Report format on standard output: text, json, sarif or brief (one line per file that needs attention).' -rfka 'text json sarif brief'
complete -c 'metascrub' -n '__metascrub_should_offer_completions_for_flags_or_options "metascrub clean" json' -l 'json' -d 'Shorthand for --format json.'
complete -c 'metascrub' -n '__metascrub_should_offer_completions_for_flags_or_options "metascrub clean" report' -l 'report' -d 'Also write the report to this file (format from its extension: .json, .sarif, else text).' -rF
complete -c 'metascrub' -n '__metascrub_should_offer_completions_for_flags_or_options "metascrub clean" color' -l 'color' -d 'Colour the text report: auto (a terminal, unless NO_COLOR is set), always or never.' -rfka 'auto always never'
complete -c 'metascrub' -n '__metascrub_should_offer_completions_for_flags_or_options "metascrub clean" q quiet' -s 'q' -l 'quiet' -d 'Print nothing on standard output and no progress bar; errors still go to standard error.'
complete -c 'metascrub' -n '__metascrub_should_offer_completions_for_flags_or_options "metascrub clean" v verbose' -s 'v' -l 'verbose' -d 'Also list kept items, notes, policy rules and verification.'
complete -c 'metascrub' -n '__metascrub_should_offer_completions_for_flags_or_options "metascrub clean" show-values' -l 'show-values' -d 'Print metadata values (GPS positions, serial numbers). Off by default: values never reach logs.'
complete -c 'metascrub' -n '__metascrub_should_offer_completions_for_flags_or_options "metascrub clean" refuse-damaged' -l 'refuse-damaged' -d 'Refuse damaged files (cut or corrupt in their media data) instead of cleaning their metadata and copying the damaged part unchanged.'
complete -c 'metascrub' -n '__metascrub_should_offer_completions_for_flags_or_options "metascrub clean" jobs' -l 'jobs' -d 'Files processed in parallel (default: the number of cores).' -rfka ''
complete -c 'metascrub' -n '__metascrub_should_offer_completions_for_flags_or_options "metascrub clean"' -l 'include' -d 'Only files matching this glob, relative to the folder given (repeatable; `**` matches any folders).' -rfka ''
complete -c 'metascrub' -n '__metascrub_should_offer_completions_for_flags_or_options "metascrub clean"' -l 'exclude' -d 'Leave out files and folders matching this glob (repeatable).' -rfka ''
complete -c 'metascrub' -n '__metascrub_should_offer_completions_for_flags_or_options "metascrub clean" config' -l 'config' -d 'Read settings from this file instead of the nearest .metascrub.yaml.' -rfa '(set -l exts \'yaml\' \'yml\';for p in (string match -e -- \'*/\' (commandline -t);or printf \n)*.{$exts};printf %s\n $p;end;__fish_complete_directories (commandline -t) \'\')'
complete -c 'metascrub' -n '__metascrub_should_offer_completions_for_flags_or_options "metascrub clean" max-pixels' -l 'max-pixels' -d 'Most pixels any whole-image decode may have (bake proofs, re-encodes, conversions); above it a bake keeps its tag and a re-encode is refused. Default: the policy\'s max-pixels, else 100000000.' -rfka ''
complete -c 'metascrub' -n '__metascrub_should_offer_completions_for_flags_or_options "metascrub clean" no-config' -l 'no-config' -d 'Ignore .metascrub.yaml files.'
complete -c 'metascrub' -n '__metascrub_should_offer_completions_for_flags_or_options "metascrub clean" version' -l 'version' -d 'Show the version.'
complete -c 'metascrub' -n '__metascrub_should_offer_completions_for_flags_or_options "metascrub clean" h help' -s 'h' -l 'help' -d 'Show help information.'
complete -c 'metascrub' -n '__metascrub_should_offer_completions_for_flags_or_options "metascrub hook" version' -l 'version' -d 'Show the version.'
complete -c 'metascrub' -n '__metascrub_should_offer_completions_for_flags_or_options "metascrub hook" h help' -s 'h' -l 'help' -d 'Show help information.'
complete -c 'metascrub' -n '__metascrub_should_offer_completions_for_positional "metascrub hook" -eq 1' -fa 'install' -d 'Write .git/hooks/pre-commit (or under core.hooksPath).'
complete -c 'metascrub' -n '__metascrub_should_offer_completions_for_positional "metascrub hook" -eq 1' -fa 'uninstall' -d 'Remove the pre-commit hook metascrub installed (and only that).'
complete -c 'metascrub' -n '__metascrub_should_offer_completions_for_flags_or_options "metascrub hook install" mode' -l 'mode' -d 'check (block the commit) or fix (clean and re-stage).' -rfka 'check fix'
complete -c 'metascrub' -n '__metascrub_should_offer_completions_for_flags_or_options "metascrub hook install" force' -l 'force' -d 'Replace a pre-commit hook metascrub did not write (it is moved aside to pre-commit.before-metascrub).'
complete -c 'metascrub' -n '__metascrub_should_offer_completions_for_flags_or_options "metascrub hook install" version' -l 'version' -d 'Show the version.'
complete -c 'metascrub' -n '__metascrub_should_offer_completions_for_flags_or_options "metascrub hook install" h help' -s 'h' -l 'help' -d 'Show help information.'
complete -c 'metascrub' -n '__metascrub_should_offer_completions_for_flags_or_options "metascrub hook uninstall" version' -l 'version' -d 'Show the version.'
complete -c 'metascrub' -n '__metascrub_should_offer_completions_for_flags_or_options "metascrub hook uninstall" h help' -s 'h' -l 'help' -d 'Show help information.'
complete -c 'metascrub' -n '__metascrub_should_offer_completions_for_flags_or_options "metascrub policy" version' -l 'version' -d 'Show the version.'
complete -c 'metascrub' -n '__metascrub_should_offer_completions_for_flags_or_options "metascrub policy" h help' -s 'h' -l 'help' -d 'Show help information.'
complete -c 'metascrub' -n '__metascrub_should_offer_completions_for_positional "metascrub policy" -eq 1' -fa 'list' -d 'List the shipped policies.'
complete -c 'metascrub' -n '__metascrub_should_offer_completions_for_positional "metascrub policy" -eq 1' -fa 'show' -d 'Print a shipped policy\'s YAML.'
complete -c 'metascrub' -n '__metascrub_should_offer_completions_for_positional "metascrub policy" -eq 1' -fa 'check' -d 'Validate a policy file; errors name file, line and key.'
complete -c 'metascrub' -n '__metascrub_should_offer_completions_for_flags_or_options "metascrub policy list" version' -l 'version' -d 'Show the version.'
complete -c 'metascrub' -n '__metascrub_should_offer_completions_for_flags_or_options "metascrub policy list" h help' -s 'h' -l 'help' -d 'Show help information.'
complete -c 'metascrub' -n '__metascrub_should_offer_completions_for_positional "metascrub policy show" -eq 1' -fka 'location share strict'
complete -c 'metascrub' -n '__metascrub_should_offer_completions_for_flags_or_options "metascrub policy show" version' -l 'version' -d 'Show the version.'
complete -c 'metascrub' -n '__metascrub_should_offer_completions_for_flags_or_options "metascrub policy show" h help' -s 'h' -l 'help' -d 'Show help information.'
complete -c 'metascrub' -n '__metascrub_should_offer_completions_for_positional "metascrub policy check" -eq 1' -fa '(set -l exts \'yaml\' \'yml\';for p in (string match -e -- \'*/\' (commandline -t);or printf \n)*.{$exts};printf %s\n $p;end;__fish_complete_directories (commandline -t) \'\')'
complete -c 'metascrub' -n '__metascrub_should_offer_completions_for_flags_or_options "metascrub policy check" version' -l 'version' -d 'Show the version.'
complete -c 'metascrub' -n '__metascrub_should_offer_completions_for_flags_or_options "metascrub policy check" h help' -s 'h' -l 'help' -d 'Show help information.'
complete -c 'metascrub' -n '__metascrub_should_offer_completions_for_flags_or_options "metascrub formats" hook-pattern' -l 'hook-pattern' -d 'Print the file-name pattern (a regular expression) the pre-commit hooks use: the extensions of every format above.'
complete -c 'metascrub' -n '__metascrub_should_offer_completions_for_flags_or_options "metascrub formats" version' -l 'version' -d 'Show the version.'
complete -c 'metascrub' -n '__metascrub_should_offer_completions_for_flags_or_options "metascrub formats" h help' -s 'h' -l 'help' -d 'Show help information.'
complete -c 'metascrub' -n '__metascrub_should_offer_completions_for_flags_or_options "metascrub serve" version' -l 'version' -d 'Show the version.'
complete -c 'metascrub' -n '__metascrub_should_offer_completions_for_flags_or_options "metascrub serve" h help' -s 'h' -l 'help' -d 'Show help information.'
complete -c 'metascrub' -n '__metascrub_should_offer_completions_for_flags_or_options "metascrub help" version' -l 'version' -d 'Show the version.'
