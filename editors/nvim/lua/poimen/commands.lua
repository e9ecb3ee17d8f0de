-- :PoimenWhatDoWeKnow, :PoimenRemember, :PoimenSymptoms, :PoimenRun, :PoimenRebuild.
local util = require('poimen.util')
local forward = require('poimen.forward')
local M = {}

--- What the cursor is on: the first diagnostic on the cursor's line (any source), as
--- {uri, position, message}; `{}` (the latest failure poimen saw) when there is none.
function M.target()
  local buf = vim.api.nvim_get_current_buf()
  local row = vim.api.nvim_win_get_cursor(0)[1] - 1
  local here = vim.diagnostic.get(buf, { lnum = row })
  if #here == 0 then
    return vim.empty_dict()
  end
  local client = util.clients()[1]
  local d = here[1]
  local line = vim.api.nvim_buf_get_lines(buf, d.lnum, d.lnum + 1, false)[1]
  return {
    uri = vim.uri_from_bufnr(buf),
    position = { line = d.lnum, character = util.character(line, d.col, client and client.offset_encoding) },
    message = d.message,
  }
end

function M.what_do_we_know()
  util.exec('poimen.whatDoWeKnow', M.target(), function(result)
    if result and result.shown == 'message' and result.headline then
      vim.notify('poimen: ' .. result.headline)
    end
  end)
end

function M.remember(text)
  local target = M.target()
  local function send(lesson)
    if not lesson or not lesson:match('%S') then
      return
    end
    local argument = vim.tbl_extend('force', {}, target, { text = lesson })
    util.exec('poimen.remember', argument)
  end
  if text and text:match('%S') then
    send(text)
  else
    vim.ui.input({ prompt = 'How was this fixed? ' }, send)
  end
end

local function show_lines(title, lines)
  vim.cmd('botright new')
  local buf = vim.api.nvim_get_current_buf()
  vim.bo[buf].buftype = 'nofile'
  vim.bo[buf].bufhidden = 'wipe'
  vim.bo[buf].filetype = 'markdown'
  pcall(vim.api.nvim_buf_set_name, buf, title)
  local flat = {}
  for _, line in ipairs(lines) do
    vim.list_extend(flat, vim.split(line, '\n', { plain = true }))
  end
  vim.api.nvim_buf_set_lines(buf, 0, -1, false, flat)
  vim.bo[buf].modifiable = false
end

local function projection_lines(sha, projection)
  local lines = { '# Symptom projection of ' .. sha, '' }
  for _, line in ipairs(projection.lines or {}) do
    if type(line) == 'table' then
      table.insert(lines, ('- %s  _(%s)_'):format(line.text, line.origin or '?'))
    else
      table.insert(lines, '- ' .. tostring(line))
    end
  end
  if #(projection.lines or {}) == 0 then
    table.insert(lines, '_(empty: this memory explains no failure)_')
  end
  table.insert(lines, '')
  for key, value in vim.spairs(projection) do
    if key ~= 'lines' and key ~= 'text' and type(value) ~= 'table' then
      table.insert(lines, ('%s: %s'):format(key, tostring(value)))
    end
  end
  return lines
end

function M.symptoms(sha)
  local function show(chosen)
    util.exec('poimen.showSymptoms', { sha = chosen }, function(projection)
      show_lines('poimen://symptoms/' .. chosen, projection_lines(chosen, projection or {}))
    end)
  end
  if sha and sha ~= '' then
    return show(sha)
  end
  util.exec('poimen.showSymptoms', vim.empty_dict(), function(result)
    local memories = (result or {}).memories or {}
    if #memories == 0 then
      vim.notify('poimen: no memories in the answers shown so far')
      return
    end
    vim.ui.select(memories, {
      prompt = 'Symptom projection of which memory?',
      format_item = function(m)
        return ('%s %s  %s'):format(m.level or '?', (m.sha or ''):sub(1, 10), m.label or '')
      end,
    }, function(choice)
      if choice then
        show(choice.sha)
      end
    end)
  end)
end

function M.setup(opts)
  local define = vim.api.nvim_create_user_command
  define('PoimenWhatDoWeKnow', M.what_do_we_know, { desc = 'poimen: What do we know about this error?' })
  define('PoimenRemember', function(a)
    M.remember(a.args)
  end, { nargs = '*', desc = 'poimen: Remember how this was fixed…' })
  define('PoimenSymptoms', function(a)
    M.symptoms(a.args)
  end, { nargs = '?', desc = 'poimen: Show symptom projection' })
  define('PoimenRebuild', function()
    util.exec('poimen.rebuild', vim.empty_dict())
  end, { desc = 'poimen: Rebuild every projection from the log' })
  define('PoimenRun', function(a)
    forward.run(a.args, opts, function(params)
      vim.notify(('poimen: `%s` exited %d'):format(params.command, params.exitCode))
    end)
  end, { nargs = '+', complete = 'shellcmd', desc = 'poimen: run a command and forward its output' })
end

return M
