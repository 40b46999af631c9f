#!/bin/bash
# Runs the command blocks of README.md and docs/*.md, as a reader would type them, so the commands
# the documents show cannot drift from the tool. A block is marked by a line right before its
# fence:
#   <!-- runnable -->        a ```sh block runs as it is (bash -e); a ```python block runs with
#                            the python3 that has h5py and pandas, python/ on its path
#   <!-- runnable: dry -->   a ```sh block for a machine this is not (a Slurm cluster, GPUs): it
#                            runs with stand-ins for sbatch, srun and mpirun that check what they
#                            are given (the batch script exists and has #SBATCH lines, the program
#                            exists, every config named validates, mpirun gets at least 2 ranks)
#                            and start nothing; the scripts the block calls run for real
#   <!-- not run: WHY -->    a block that is not run here, and why (a trial program, not a
#                            command; a walkthrough another test runs; a command that installs)
# Every shell or python block of those documents must be marked one of these ways. The blocks run in document order (README first), each in its
# own shell, in a scratch folder that looks like a checkout after scripts/build.sh: configs/,
# python/, scripts/ and build/bin (the tree under test, also on PATH); HOME is that folder too.
# Open MPI may run as root here, as in CI.
# usage: doc_commands_test.sh BIN_DIR SOURCE_DIR
set -euo pipefail
export LC_ALL=C
bin=$(cd "$1" && pwd) src=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cp -r "$src/configs" "$src/python" "$src/scripts" "$work/"
mkdir -p "$work/build" "$work/results" "$work/.blocks" "$work/.dry"
ln -s "$bin" "$work/build/bin"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_btl_vader_single_copy_mechanism=none
export HOME=$work PATH=$work/build/bin:$PATH PYTHONPATH=$work/python

# The stand-ins of a dry block. Each call is logged; a config it names must validate.
cat > "$work/.dry/check-config" << EOF
#!/bin/bash
# Validates every *.yaml argument with the cleansweep under test.
for a in "\$@"; do
  case \$a in
    *.yaml) "$bin/cleansweep" validate "\$a" > /dev/null || { echo "dry: \$a does not validate" >&2; exit 1; } ;;
  esac
done
EOF
cat > "$work/.dry/sbatch" << EOF
#!/bin/bash
echo "sbatch \$*" >> "$work/.dry/calls"
script=
for a in "\$@"; do
  case \$a in
    --wrap=*) script=wrap ;;
    -*) ;;
    *) [ -z "\$script" ] && script=\$a ;;
  esac
done
[ -n "\$script" ] || { echo "dry sbatch: no batch script" >&2; exit 1; }
if [ "\$script" != wrap ]; then
  [ -f "\$script" ] || { echo "dry sbatch: no such batch script: \$script" >&2; exit 1; }
  grep -q '^#SBATCH' "\$script" || { echo "dry sbatch: \$script has no #SBATCH lines" >&2; exit 1; }
fi
"$work/.dry/check-config" "\$@"
echo 4242
EOF
cat > "$work/.dry/mpirun" << EOF
#!/bin/bash
echo "mpirun \$*" >> "$work/.dry/calls"
ranks=0
while [ \$# -gt 0 ]; do
  case \$1 in
    -np | -n) ranks=\$2; shift 2 ;;
    -*) shift ;;
    *) break ;;
  esac
done
[ "\$ranks" -ge 2 ] || { echo "dry mpirun: cleansweep needs at least 2 ranks, got '\$ranks'" >&2; exit 1; }
[ -x "\$1" ] || command -v "\$1" > /dev/null || { echo "dry mpirun: no such program: \$1" >&2; exit 1; }
"$work/.dry/check-config" "\$@"
EOF
cp "$work/.dry/mpirun" "$work/.dry/srun"
sed -i 's/^echo "mpirun/echo "srun/; s/-np | -n)/-n | --ntasks)/' "$work/.dry/srun"
chmod +x "$work/.dry/"*

# Each marked block to a file of its own, numbered in document order: NNN-DOC.KIND
seq=0
unmarked=()
for doc in "$src/README.md" "$src"/docs/*.md; do
  name=$(basename "$doc")
  while IFS=$'\t' read -r kind line body_file; do
    seq=$((seq + 1))
    case $kind in
      sh | python | dry) mv "$body_file" "$work/.blocks/$(printf %03d $seq)-$name.$kind" ;;
      skipped) rm -f "$body_file" ;;
      unmarked-*)
        rm -f "$body_file"
        unmarked+=("$name:$line (${kind#unmarked-})")
        ;;
    esac
  done < <(awk -v tmp="$work/.blocks/raw-$name" '
    /^<!-- runnable -->$/ {mark = "run"; next}
    /^<!-- runnable: dry -->$/ {mark = "dry"; next}
    /^<!-- not run: .+ -->$/ {mark = "skip"; next}
    !inside && /^```(sh|bash|python)$/ {
      lang = substr($0, 4); n++; file = tmp "." n; printf "" > file; inside = 1
      if (mark == "dry" && lang != "python") kind = "dry"
      else if (mark == "run") kind = (lang == "python") ? "python" : "sh"
      else if (mark == "skip") kind = "skipped"
      else kind = "unmarked-" lang
      print kind "\t" NR "\t" file; mark = ""; next
    }
    inside && /^```$/ {inside = 0; close(file); next}
    inside {print >> file; next}
    !/^[[:space:]]*$/ {mark = ""}' "$doc" > "$work/.blocks/manifest" && cat "$work/.blocks/manifest")
done
[ ${#unmarked[@]} -eq 0 ] ||
  { echo "FAIL: command blocks marked neither runnable, dry nor not run: ${unmarked[*]}"; exit 1; }

blocks=0
for block in "$work"/.blocks/[0-9]*; do
  [ -e "$block" ] || break
  blocks=$((blocks + 1))
  echo "--- $(basename "$block")"
  cat "$block"
  rm -f "$work/.dry/calls"
  case $block in
    *.python) run=(/usr/bin/python3 "$block") ;;
    *.dry) run=(env PATH="$work/.dry:$PATH" bash -e "$block") ;;
    *) run=(bash -e "$block") ;;
  esac
  rc=0
  (cd "$work" && timeout 600 "${run[@]}") > "$block.out" 2>&1 || rc=$?
  [ $rc = 0 ] || { echo "FAIL: $(basename "$block") exited $rc:"; tail -20 "$block.out"; exit 1; }
  if [[ $block == *.dry ]]; then
    [ -s "$work/.dry/calls" ] || { echo "FAIL: $(basename "$block") is marked dry but calls no sbatch, srun or mpirun"; exit 1; }
    sed 's/^/  dry: /' "$work/.dry/calls"
  fi
done
[ "$blocks" -gt 0 ] || { echo "FAIL: no block marked runnable in README.md or docs/"; exit 1; }
echo "PASS: $blocks blocks ran"
