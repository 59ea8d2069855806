#!/usr/bin/env python3
"""The translation units of scripts/check-portability.sh's two syntax passes, and their groups.

    portability_units.py mingw DB SRC QT INC PCH [ROTATION]
    portability_units.py clang DB SRC QT PCH SKIP_ASAN_TREE

DB is the build's compile_commands.json, SRC the checkout, QT the host's Qt include folder, INC
(mingw) the folder of links that stands in for /usr/include, PCH the folder for the groups'
headers. SKIP_ASAN_TREE (clang, 0 or 1) leaves out the units that scripts/asan-unit.sh compiles
with clang -Werror anyway (mapi_core, the unit tests, the CLI: the "asan" preset).

mingw, ROTATION N > 1 (scripts/test.sh, CI): a unit is checked in this run when
  - its file, or a file of ours it includes (followed through every #include that resolves to the
    checkout), was changed by a commit made in the 6 hours up to HEAD's, or by one of the last 10
    commits, or is changed in the work tree: a session (at most 3 hours) ends with CI on its last
    commit, so its commits all fall in that window, and the run that lands a change checks every
    unit the change can reach. A change of a CMakeLists.txt (a unit's flags) is not followed: the
    shares reach those units;
  - its own file names a platform (Q_OS_*, _WIN32, ...): Windows compiles other code there;
  - or it falls in this run's share: the units are split into N shares by a hash of their path,
    and a run checks share (HEAD's commit count mod N), so that a unit nothing touched is still
    checked every few runs (a change of compiler or of Qt's headers; a change older than the window).
The others are listed in PCH/left-out.txt, so that the caller says how many and why. Without git
(no checkout, no history) every unit is checked. ROTATION 1, the default: every unit.

clang: a unit that the build itself compiled with clang and -Werror (scripts/build.sh --clang, as
CI builds) is left out when its object is at least as new as its source: the build was that check.
Their files are listed in PCH/built-by-clang.txt, so that the caller can say how many.

Prints one line per unit: its group's header (or -), the file, then its flags, shell-quoted. For
mingw the host's include folders are mapped to INC and Linux's Qt mkspec to MinGW's.

Most of a unit's time is parsing Qt's and the standard headers, so the units that share their
flags (one library, or the tests of one folder) share a precompiled header of them: a group's
pchN.h holds only standard, Qt and nlohmann headers that (measured with -M) nearly all of its
units include anyway, never a header or a macro of ours (FastHash.h's XXH_INLINE_ALL is why
xxhash.h is not there) and no `using`. Each unit gets it as -include, first: it can hide a
missing #include only of those headers, which are the same on Windows and macOS (their
libstdc++/libc++, Qt's own headers), and the Linux build checks each unit's own includes. It never
includes <windows.h> (nor do they: bench_topology sets NOMINMAX first). A group is the units whose
flags agree on all that can change what those headers mean (pch_key): -DMAPI_* macros, which
those headers never name, and include folders of ours are left out of the key, so that each test,
its own target, joins its folder's group; the header is built with the group's key flags.
A PCH takes 5-14 s to build and saves 1-4 s per unit: only groups of at least MIN_GROUP units get
one (fewer do not pay for it). The caller compiles a unit without its PCH when the compiler
refuses the PCH, so the check never depends on it.
"""
import json
import os
import re
import shlex
import subprocess
import sys
import zlib

MIN_GROUP = 6
STD = ['algorithm', 'array', 'atomic', 'chrono', 'cmath', 'cstdint', 'deque', 'filesystem',
       'functional', 'limits', 'map', 'memory', 'optional', 'set', 'sstream', 'string',
       'string_view', 'tuple', 'unordered_map', 'utility', 'variant', 'vector']
QT_CORE = ['QtGlobal', 'QObject', 'QString', 'QByteArray', 'QHash', 'QList', 'QStringList', 'QMap',
           'QSet', 'QSharedPointer', 'QDebug', 'QVariant', 'QTimer', 'QElapsedTimer', 'QDateTime']
QT_WIDGETS = ['QColor', 'QFont', 'QPixmap', 'QIcon', 'QWidget']
# Every test includes <QtTest> (all of Qt Core and Qt Test) through its folder's support header.
TEST = ['condition_variable', 'future', 'mutex', 'random', 'QtTest']
ASAN_TREE = re.compile(r'(^|/)(core/CMakeFiles/mapi_core\.dir|tests/unit/CMakeFiles/[^/]+\.dir|'
                       r'app/CMakeFiles/map-inspector-cli\.dir)/')


def shadows(folder):
    """Whether a folder could stand in for a header of the PCH: a file named like a standard or C
    header (lowercase, no extension or .h/.hpp), or a bits/, nlohmann/ or Qt* folder."""
    try:
        names = os.listdir(folder)
    except OSError:
        return False
    return any(n in ('bits', 'nlohmann') or n.startswith('Qt') or
               (re.fullmatch(r'[a-z0-9_]+(\.h|\.hpp)?', n) and os.path.isfile(f'{folder}/{n}'))
               for n in names)


def pch_key(flags):
    """A unit's flags less those that cannot change the PCH's headers: our own macros (-DMAPI_*)
    and every -I that could not shadow a header of the PCH (ours: our headers, moc's and uic's
    output)."""
    return tuple(a for a in flags
                 if not a.startswith('-DMAPI_') and
                 not (a.startswith('-I') and (re.fullmatch(r'-I.*_autogen/include', a) or
                                              not shadows(a[2:]))))


def mingw_flags(args, qt, inc):
    out, i = [], 0
    while i < len(args):
        a = args[i]
        if a == '-isystem':
            p = args[i + 1]
            i += 2
            if p.startswith(qt):
                p = inc + '/qt6' + p[len(qt):]
            elif p.endswith('mkspecs/linux-g++'):
                p = p[:-len('linux-g++')] + 'win32-g++'
            elif p.startswith('/usr/'):
                p = inc
            out += ['-isystem', p]
            continue
        if a.startswith('-I/usr/'):
            out.append('-I' + inc)
        elif not (a in ('-fPIC', '-g') or a.startswith('-O') or a.startswith('-W')):
            out.append(a)
        i += 1
    return out


def clang_flags(args):
    return [a for a in args if a != '-Winvalid-pch' and not a.startswith('-g')]


def compiled_by_clang(entry, compiler, args, obj):
    """Whether the build compiled this unit with clang -Werror, and its object is not older than
    its source (a unit whose last compile failed keeps an older object, or none)."""
    if not os.path.basename(compiler).startswith('clang') or '-Werror' not in args or not obj:
        return False
    try:
        return (os.path.getmtime(os.path.join(entry['directory'], obj)) >=
                os.path.getmtime(entry['file']))
    except OSError:
        return False


PLATFORM = re.compile(r'^[ \t]*#[ \t]*(if|elif).*(Q_OS_|_WIN32|__linux__|__APPLE__|__unix__|_MSC_VER)', re.M)
INCLUDE = re.compile(r'^[ \t]*#[ \t]*include[ \t]*([<"])([^>"]+)[>"]', re.M)
WINDOW_SECONDS = 6 * 3600
WINDOW_COMMITS = 10


def git(src, *args):
    return subprocess.run(['git', '-C', src, *args], capture_output=True, text=True, check=True).stdout


def recent_changes(src):
    """The files (relative to SRC) changed in the window, and HEAD's commit count; None without
    git."""
    try:
        head_time = int(git(src, 'log', '-1', '--format=%ct').strip())
        count = int(git(src, 'rev-list', '--count', 'HEAD').strip())
        files = set(git(src, 'log', f'--since={head_time - WINDOW_SECONDS}', '--name-only',
                        '--format=').split())
        files |= set(git(src, 'log', f'-{WINDOW_COMMITS}', '--name-only', '--format=').split())
        files |= set(git(src, 'diff', '--name-only', 'HEAD').split())
        files |= set(git(src, 'ls-files', '--others', '--exclude-standard').split())
    except (OSError, ValueError, subprocess.CalledProcessError):
        return None
    return {os.path.join(src, f) for f in files}, count


class Includes:
    """The checkout's files a unit reads: its own and those its #includes resolve to, transitively,
    through the including file's folder and the unit's -I folders."""

    def __init__(self, src):
        self.src = src + '/'
        self.direct = {}

    def of_file(self, path, folders):
        key = (path, folders)
        if key not in self.direct:
            found = []
            try:
                text = open(path, encoding='utf-8', errors='replace').read()
            except OSError:
                text = ''
            for kind, name in INCLUDE.findall(text):
                look = ((os.path.dirname(path),) if kind == '"' else ()) + folders
                for folder in look:
                    candidate = os.path.normpath(os.path.join(folder, name))
                    if candidate.startswith(self.src) and os.path.isfile(candidate):
                        found.append(candidate)
                        break
            self.direct[key] = found
        return self.direct[key]

    def closure(self, unit, flags):
        folders = tuple(a[2:] for a in flags if a.startswith('-I') and (a[2:] + '/').startswith(self.src))
        seen, todo = {unit}, [unit]
        while todo:
            for f in self.of_file(todo.pop(), folders):
                if f not in seen:
                    seen.add(f)
                    todo.append(f)
        return seen


def rotate(units, src, rotation, pch):
    """The units this run checks (module docstring), and those it leaves out to PCH/left-out.txt."""
    changes = recent_changes(src) if rotation > 1 else None
    if changes is None:
        return units
    changed, count = changes
    share = count % rotation
    includes = Includes(src)
    kept, left = [], []
    for unit in units:
        f, flags = unit
        in_share = zlib.crc32(os.path.relpath(f, src).encode()) % rotation == share
        try:
            platform = bool(PLATFORM.search(open(f, encoding='utf-8', errors='replace').read()))
        except OSError:
            platform = True
        if in_share or platform or includes.closure(f, flags) & changed:
            kept.append(unit)
        else:
            left.append(f)
    with open(f'{pch}/left-out.txt', 'w') as h:
        h.write(f'# share {share} of {rotation}\n')
        h.writelines(f + '\n' for f in left)
    return kept


def main():
    mode, db, src, qt = sys.argv[1:5]
    rotation = 1
    if mode == 'mingw':
        inc, pch = sys.argv[5:7]
        rotation = int(sys.argv[7]) if len(sys.argv) > 7 else 1
        qt_root = inc + '/qt6'
        folders = ('core', 'ui', 'app', 'tests', 'bench')
    elif mode == 'clang':
        pch, skip = sys.argv[5], sys.argv[6] == '1'
        qt_root = qt
        folders = None
    else:
        sys.exit(f'unknown pass {mode}')
    units, built_by_clang = [], []
    for entry in json.load(open(db)):
        f = entry['file']
        if folders is not None:
            if not any(f.startswith(f'{src}/{d}/') for d in folders):
                continue
        elif (not f.startswith(src + '/') or f.startswith(src + '/tools/demo-system/') or
              f.endswith('cmake_pch.hxx.cxx')):
            continue
        compiler, *args = shlex.split(entry['command'])
        kept, i, obj = [], 0, ''
        while i < len(args):
            a = args[i]
            if a == '-o':
                obj = args[i + 1]
                i += 2
                continue
            if a == '-include' and args[i + 1].endswith('cmake_pch.hxx'):
                i += 2  # the tests' own PCH (tests/CMakeLists.txt): a Linux compiler's
                continue
            if (a == '-Xclang' and args[i + 1:i + 3] in (['-include-pch', '-Xclang'], ['-include', '-Xclang'])
                    and re.search(r'cmake_pch\.hxx(\.pch)?$', args[i + 3] if i + 3 < len(args) else '')):
                i += 4  # the same, as CMake gives it to clang (-Xclang -include-pch -Xclang X.pch, ...)
                continue
            if a in ('-c', f):
                i += 1
                continue
            kept.append(a)
            i += 1
        if mode == 'clang' and skip and ASAN_TREE.search(obj):
            continue
        if mode == 'clang' and compiled_by_clang(entry, compiler, args, obj):
            built_by_clang.append(f)
            continue
        units.append((f, mingw_flags(kept, qt, inc) if mode == 'mingw' else clang_flags(kept)))
    if mode == 'clang':
        with open(f'{pch}/built-by-clang.txt', 'w') as h:
            h.writelines(f + '\n' for f in built_by_clang)
    if mode == 'mingw':
        units = rotate(units, src, rotation, pch)
    groups = {}
    for n, (f, flags) in enumerate(units):
        groups.setdefault(pch_key(flags), []).append(n)
    header = {}
    big = [(k, m) for k, m in groups.items() if len(m) >= MIN_GROUP]
    for g, (key, members) in enumerate(big):
        name = f'{pch}/pch{g}'
        isystem = {key[i + 1] for i, a in enumerate(key) if a == '-isystem'}
        heads = list(STD)
        if f'{qt_root}/QtCore' in isystem:
            heads += QT_CORE
        if os.path.exists('/usr/include/nlohmann/json.hpp'):
            heads.append('nlohmann/json.hpp')
        if f'{qt_root}/QtWidgets' in isystem:
            heads += QT_WIDGETS
        if f'{qt_root}/QtTest' in isystem:
            heads += TEST
        with open(name + '.h', 'w') as h:
            h.write('// Generated by scripts/portability_units.py: what most units of this group include.\n')
            h.writelines(f'#include <{x}>\n' for x in heads)
        with open(name + '.flags', 'w') as h:
            h.write(' '.join(shlex.quote(x) for x in key) + '\n')
        with open(name + '.units', 'w') as h:
            h.writelines(units[n][0] + '\n' for n in members)
        for n in members:
            header[n] = name + '.h'
    for n, (f, flags) in enumerate(units):
        print(' '.join(shlex.quote(x) for x in [header.get(n, '-'), f] + flags))


if __name__ == '__main__':
    main()
