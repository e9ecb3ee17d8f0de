-- Server-to-client messages poimen handles its own way.
local util = require('poimen.util')
local M = {}

--- Open the full answer in a split (the default handler replaces the current buffer).
local function show_document(err, params, ctx)
  if err or not params or params.external then
    return vim.lsp.handlers['window/showDocument'](err, params, ctx)
  end
  local path = vim.uri_to_fname(params.uri)
  local win = vim.fn.bufwinid(vim.fn.bufnr(path))
  if win ~= -1 then
    vim.api.nvim_set_current_win(win)
    vim.cmd('checktime')
  else
    vim.cmd(('botright split %s'):format(vim.fn.fnameescape(path)))
  end
  vim.bo.bufhidden = 'wipe'
  vim.b.poimen_answer = true
  return { success = true }
end

--- The server noticed a failing command passes now and the user agreed to record the fix.
local function remember_fix(_, params)
  params = params or {}
  local changed = params.filesChanged or {}
  local prompt = ('How was %s fixed%s? '):format(
    params.title or 'it',
    #changed > 0 and (' (changed: ' .. table.concat(changed, ', ', 1, math.min(#changed, 5)) .. ')') or ''
  )
  vim.ui.input({ prompt = prompt }, function(text)
    if text and text:match('%S') then
      util.exec('poimen.remember', { text = text, failure = params.failure, parents = params.parents })
    end
  end)
end

function M.handlers()
  return {
    ['window/showDocument'] = show_document,
    ['poimen/rememberFix'] = remember_fix,
  }
end

return M
